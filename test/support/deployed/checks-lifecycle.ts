import { resourcesOf, type TemplateJson } from "./template";

/** A lifecycle rule as CloudFormation reads it. */
export interface LifecycleRuleJson {
  Prefix?: string;
  ExpirationInDays?: number;
  ObjectSizeGreaterThan?: number | string;
  Transitions?: Array<{ StorageClass: string; TransitionInDays: number }>;
}

/** The least days S3 bills an object in a class (deleted earlier, the rest is billed anyway). */
const MIN_DAYS: Record<string, number> = { STANDARD_IA: 30, GLACIER_IR: 90 };
/** S3's 128 KB: no smaller object should move to a class that bills it as 128 KB. */
const SMALL_OBJECT_BYTES = 128 * 1024;

/** The data bucket (the one that logs its requests) and its access-log bucket, from a template. */
export function bucketsOf(template: TemplateJson) {
  const buckets = resourcesOf(template, "AWS::S3::Bucket");
  const data = buckets.find(([, b]) => b.Properties?.LoggingConfiguration);
  const logsId = (data?.[1].Properties?.LoggingConfiguration as { DestinationBucketName?: { Ref?: string } })
    ?.DestinationBucketName?.Ref;
  const logs = buckets.find(([id]) => id === logsId);
  const config = (b: (typeof buckets)[number] | undefined) =>
    (b?.[1].Properties?.LifecycleConfiguration ?? {}) as {
      Rules?: LifecycleRuleJson[];
      TransitionDefaultMinimumObjectSize?: string;
    };
  return { data: config(data), accessLog: config(logs) };
}

/** What the deployment asked for (its config's values), against which the template's rules are checked. */
export interface ExpectedLifecycle {
  recordings: { infrequentAccessDays: number; glacierDays: number; retainDays?: number };
  archive: { infrequentAccessDays: number; glacierDays: number };
  accessLogDays: number;
}

/**
 * Check (#59): the data bucket's lifecycle runs as priced. No object under 128 KB moves to
 * Infrequent Access or Glacier IR (the bucket's `TransitionDefaultMinimumObjectSize`, or a rule's
 * `ObjectSizeGreaterThan`); the compacted Parquet and the recordings move at the days the
 * deployment set (a recording's transition left out only when its retention would end it within
 * the class's minimum storage); no transition is followed by an expiration within that minimum;
 * the access log expires after the days the deployment set.
 */
export function lifecycleProblems(template: TemplateJson, expected: ExpectedLifecycle): string[] {
  const problems: string[] = [];
  const { data, accessLog } = bucketsOf(template);
  const rules = data.Rules ?? [];
  const bucketWide = data.TransitionDefaultMinimumObjectSize === "all_storage_classes_128K";
  for (const rule of rules) {
    if (!rule.Transitions?.length) continue;
    const floor = Number(rule.ObjectSizeGreaterThan ?? 0);
    if (!bucketWide && floor < SMALL_OBJECT_BYTES - 1)
      problems.push(`${rule.Prefix ?? "(bucket)"}: moves objects under 128 KB (no minimum object size)`);
    for (const t of rule.Transitions) {
      const minimum = MIN_DAYS[t.StorageClass] ?? 0;
      if (rule.ExpirationInDays !== undefined && rule.ExpirationInDays < t.TransitionInDays + minimum)
        problems.push(
          `${rule.Prefix}: expires after ${rule.ExpirationInDays} days, within ${t.StorageClass}'s ${minimum}-day minimum from day ${t.TransitionInDays}`,
        );
    }
  }
  const transitionsOf = (prefix: string) =>
    Object.fromEntries(
      (rules.find((r) => r.Prefix === prefix)?.Transitions ?? []).map((t) => [
        t.StorageClass,
        t.TransitionInDays,
      ]),
    );
  const want = (prefix: string, ia: number | undefined, glacier: number | undefined) => {
    const got = transitionsOf(prefix);
    if (got.STANDARD_IA !== ia)
      problems.push(`${prefix}: to Infrequent Access after ${got.STANDARD_IA}, not ${ia}`);
    if (got.GLACIER_IR !== glacier)
      problems.push(`${prefix}: to Glacier IR after ${got.GLACIER_IR}, not ${glacier}`);
  };
  const { archive, recordings } = expected;
  want("compact/", archive.infrequentAccessDays, archive.glacierDays);
  const lasts = (after: number, minimum: number) =>
    recordings.retainDays === undefined || recordings.retainDays >= after + minimum;
  want(
    "recordings/",
    lasts(recordings.infrequentAccessDays, 30) ? recordings.infrequentAccessDays : undefined,
    lasts(recordings.glacierDays, 90) ? recordings.glacierDays : undefined,
  );
  const logDays = (accessLog.Rules ?? []).map((r) => r.ExpirationInDays).find((d) => d !== undefined);
  if (logDays !== expected.accessLogDays)
    problems.push(`the access log expires after ${logDays ?? "never"} days, not ${expected.accessLogDays}`);
  return problems;
}
