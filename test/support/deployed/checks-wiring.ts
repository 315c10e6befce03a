import {
  loadIngestConfig,
  loadProjectorConfig,
  loadReconcilerConfig,
  loadRecorderConfig,
  loadRollupConfig,
} from "../../../shared/config/function-config";
import { STREAM_ATTRIBUTES } from "../../../shared/stream/subscribers";
import { functionIds } from "./checks-iam";
import { canonical } from "./iam";
import { resourcesOf, type TemplateJson } from "./template";

/** Each function's configuration loader: what its cold start reads (`shared/config/function-config.ts`). */
const LOADERS: Record<string, (env: Record<string, string | undefined>) => unknown> = {
  ingest: loadIngestConfig,
  projector: loadProjectorConfig,
  recorder: loadRecorderConfig,
  reconciler: loadReconcilerConfig,
  rollup: loadRollupConfig,
};

/**
 * Check: each function starts with the environment the template gives it: its loader (the zod
 * schemas its cold start parses) accepts the template's `Environment` (a value the template
 * resolves at deploy, a `Ref` or `GetAtt`, stands as its canonical string).
 */
export function environmentProblems(template: TemplateJson): string[] {
  const problems: string[] = [];
  for (const [service, id] of functionIds(template)) {
    const variables =
      (template.Resources[id]?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables ?? {};
    const env = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, canonical(v)]));
    const load = LOADERS[service];
    if (!load) {
      problems.push(`${service}: no configuration loader`);
      continue;
    }
    try {
      load(env);
    } catch (error) {
      problems.push(`${service}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}

/** SQS's default retention (4 days), when a queue does not set one. */
const DEFAULT_RETENTION = 345_600;

const retentionOf = (template: TemplateJson, queueId: string) =>
  Number(template.Resources[queueId]?.Properties?.MessageRetentionPeriod ?? DEFAULT_RETENTION);

/** The dead-letter queue of a queue (its redrive policy's target), if any. */
function deadLetterOf(template: TemplateJson, queueId: string): string | undefined {
  const policy = template.Resources[queueId]?.Properties?.RedrivePolicy as
    | { deadLetterTargetArn?: unknown }
    | undefined;
  return policy ? canonical(policy.deadLetterTargetArn).replace(/^arn:/, "") : undefined;
}

/**
 * Check: each event source mapping's queue (a) hides a received batch for at least 6 × its
 * function's timeout plus the batching window (AWS's guidance for Lambda's SQS event sources),
 * (b) reports partial batch failures, (c) moves a message to a DLQ after at least 5 receives (AWS:
 * a throttled batch would otherwise be dead-lettered), and (d) every queue's DLQ keeps a message
 * longer than the queue (a standard queue's dead-lettered message keeps its first enqueue time).
 */
export function queueProblems(template: TemplateJson): string[] {
  const problems: string[] = [];
  for (const [id, mapping] of resourcesOf(template, "AWS::Lambda::EventSourceMapping")) {
    const p = mapping.Properties ?? {};
    const queueId = canonical(p.EventSourceArn).replace(/^arn:/, "");
    const fnId = canonical(p.FunctionName).replace(/^ref:/, "");
    const timeout = Number(template.Resources[fnId]?.Properties?.Timeout ?? 3);
    const queue = template.Resources[queueId]?.Properties ?? {};
    const visibility = Number(queue.VisibilityTimeout ?? 30);
    const wanted = 6 * timeout + Number(p.MaximumBatchingWindowInSeconds ?? 0);
    if (visibility < wanted)
      problems.push(
        `${id}: ${queueId}'s visibility timeout ${visibility} s is under 6 × ${fnId}'s timeout + its window (${wanted} s)`,
      );
    if (!canonical(p.FunctionResponseTypes ?? []).includes("ReportBatchItemFailures"))
      problems.push(
        `${id}: does not report batch item failures (a failed record would fail its whole batch)`,
      );
    const redrive = queue.RedrivePolicy as { maxReceiveCount?: number } | undefined;
    if (!redrive) problems.push(`${id}: ${queueId} has no dead-letter queue`);
    else if (Number(redrive.maxReceiveCount) < 5)
      problems.push(
        `${id}: ${queueId} dead-letters after ${redrive.maxReceiveCount} receives (AWS advises at least 5 for a Lambda event source)`,
      );
  }
  for (const [id] of resourcesOf(template, "AWS::SQS::Queue")) {
    const dlq = deadLetterOf(template, id);
    if (dlq && retentionOf(template, dlq) <= retentionOf(template, id))
      problems.push(
        `${id}: its dead-letter queue ${dlq} keeps ${retentionOf(template, dlq)} s, not longer than its ${retentionOf(template, id)} s (a dead-lettered message keeps its first enqueue time)`,
      );
  }
  return problems;
}

/** The attribute names of a filter policy, `$or` branches included. */
function filterAttributes(policy: unknown): string[] {
  if (!policy || typeof policy !== "object" || Array.isArray(policy)) return [];
  return Object.entries(policy).flatMap(([key, value]) =>
    key === "$or" && Array.isArray(value) ? value.flatMap(filterAttributes) : [key],
  );
}

/**
 * Check: each SQS subscription of the stream's topic (a) lands in a queue whose policy lets SNS
 * send to it from that topic only (`aws:SourceArn`), the queue encrypted with a key SNS may use
 * (SQS-managed: a customer-managed key would need SNS in its key policy), and (b) filters on
 * message attributes the publisher sets (`publisherAttributes`: a filter on any other name
 * matches nothing).
 */
export function subscriptionProblems(
  template: TemplateJson,
  publisherAttributes: readonly string[],
): string[] {
  const problems: string[] = [];
  const policies = resourcesOf(template, "AWS::SQS::QueuePolicy");
  for (const [id, subscription] of resourcesOf(template, "AWS::SNS::Subscription")) {
    const p = subscription.Properties ?? {};
    if (p.Protocol !== "sqs") continue;
    const queueId = canonical(p.Endpoint).replace(/^arn:/, "");
    const topic = canonical(p.TopicArn);
    const admits = policies.some(([, policy]) => {
      const queues = (policy.Properties?.Queues as unknown[] | undefined)?.map(canonical) ?? [];
      if (!queues.includes(`ref:${queueId}`)) return false;
      const statements =
        (policy.Properties?.PolicyDocument as { Statement?: Array<Record<string, unknown>> })?.Statement ??
        [];
      return statements.some(
        (s) =>
          s.Effect === "Allow" &&
          canonical(s.Action).includes("sqs:SendMessage") &&
          JSON.stringify(s.Principal ?? {}).includes("sns.amazonaws.com") &&
          canonical(
            (s.Condition as { ArnEquals?: Record<string, unknown> } | undefined)?.ArnEquals?.[
              "aws:SourceArn"
            ],
          ) === topic,
      );
    });
    if (!admits)
      problems.push(
        `${id}: ${queueId}'s policy does not let ${topic} send to it (SNS would drop every fact)`,
      );
    const queue = template.Resources[queueId]?.Properties ?? {};
    if (queue.KmsMasterKeyId !== undefined && queue.SqsManagedSseEnabled !== true)
      problems.push(`${id}: ${queueId} is encrypted with a KMS key SNS may not be allowed to use`);
    if (p.FilterPolicyScope !== undefined && p.FilterPolicyScope !== "MessageAttributes")
      problems.push(`${id}: filters the message body, the publisher's attributes are what it sets`);
    for (const name of filterAttributes(p.FilterPolicy))
      if (!publisherAttributes.includes(name))
        problems.push(
          `${id}: filters on "${name}", an attribute the publisher never sets (${publisherAttributes.join(", ")})`,
        );
  }
  return problems;
}

/** The attributes the stream's publisher sets on every message (`streamMessage`). */
export const PUBLISHER_ATTRIBUTES = Object.values(STREAM_ATTRIBUTES);
