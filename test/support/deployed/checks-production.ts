import { fullDiff, ResourceImpact } from "@aws-cdk/cloudformation-diff";
import { RETAINED_TYPES } from "../../../infra/production";
import { resourcesOf, type TemplateJson } from "./template";

/** A template's resource with the attributes these checks read (CloudFormation's, beside Properties). */
type Resource = TemplateJson["Resources"][string] & {
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string | string[];
};

const text = (value: unknown) => String(JSON.stringify(value));

/**
 * Check (#60): every resource that holds data or what reaches it (`RETAINED_TYPES`) is retained on
 * stack deletion and on replacement, and every table has DynamoDB's deletion protection as asked.
 */
export function keptDataProblems(template: TemplateJson, deletionProtection = true): string[] {
  const problems: string[] = [];
  for (const [id, resource] of Object.entries(template.Resources) as Array<[string, Resource]>) {
    if (!(RETAINED_TYPES as readonly string[]).includes(resource.Type)) continue;
    if (resource.DeletionPolicy !== "Retain" || resource.UpdateReplacePolicy !== "Retain")
      problems.push(`${id} (${resource.Type}) is not retained: DeletionPolicy ${resource.DeletionPolicy}`);
    if (
      resource.Type === "AWS::DynamoDB::Table" &&
      resource.Properties?.DeletionProtectionEnabled !== deletionProtection
    )
      problems.push(`${id}: DeletionProtectionEnabled is not ${deletionProtection}`);
  }
  return problems;
}

/**
 * Check (#60): every alarm notifies every destination (each of `topics`, as the template names
 * them), when it fires and when it recovers.
 */
export function alarmActionProblems(template: TemplateJson, topics: unknown[]): string[] {
  const problems: string[] = [];
  for (const [id, alarm] of resourcesOf(template, "AWS::CloudWatch::Alarm"))
    for (const key of ["AlarmActions", "OKActions"]) {
      const actions = text(alarm.Properties?.[key] ?? []);
      for (const topic of topics)
        if (!actions.includes(text(topic))) problems.push(`${id}: ${key} do not notify ${text(topic)}`);
    }
  return problems;
}

/**
 * Check (#60): every function of the backend (not CDK's custom resource providers) has an Errors
 * and a Throttles alarm on its name.
 */
export function functionAlarmProblems(template: TemplateJson): string[] {
  const alarms = resourcesOf(template, "AWS::CloudWatch::Alarm").map(([, a]) => a.Properties ?? {});
  const problems: string[] = [];
  for (const [id, fn] of resourcesOf(template, "AWS::Lambda::Function")) {
    if (!String(fn.Properties?.Runtime).startsWith("nodejs24")) continue;
    for (const metric of ["Errors", "Throttles"])
      if (
        !alarms.some(
          (a) =>
            a.Namespace === "AWS/Lambda" &&
            a.MetricName === metric &&
            text(a.Dimensions).includes(text({ Ref: id })),
        )
      )
        problems.push(`${id}: no ${metric} alarm`);
  }
  return problems;
}

/**
 * Check (#60): the webhook is one route, `POST /webhook/<token>`, with a throttle of its own in
 * the stage's route settings; no `$default` route (another path is API Gateway's 404, which
 * invokes nothing); the WebhookUrl output names the path.
 */
export function doorProblems(
  template: TemplateJson & { Outputs?: Record<string, { Value: unknown }> },
  token: string,
): string[] {
  const routeKey = `POST /webhook/${token}`;
  const problems: string[] = [];
  const routes = resourcesOf(template, "AWS::ApiGatewayV2::Route").map(([, r]) => r.Properties?.RouteKey);
  if (text(routes) !== text([routeKey])) problems.push(`routes ${text(routes)}, not only ${routeKey}`);
  for (const [id, stage] of resourcesOf(template, "AWS::ApiGatewayV2::Stage")) {
    const own = (stage.Properties?.RouteSettings as Record<string, Record<string, unknown>> | undefined)?.[
      routeKey
    ];
    if (typeof own?.ThrottlingRateLimit !== "number" || typeof own?.ThrottlingBurstLimit !== "number")
      problems.push(`${id}: ${routeKey} has no throttle of its own`);
  }
  if (!text(template.Outputs?.WebhookUrl?.Value).includes(`/webhook/${token}`))
    problems.push(`the WebhookUrl output does not name /webhook/${token}`);
  return problems;
}

/**
 * Check (#60): a function a schedule invokes (an EventBridge rule's target) has no asynchronous
 * retries of Lambda's own (`MaximumRetryAttempts: 0`), beside the target's `RetryPolicy`.
 */
export function asyncRetryProblems(template: TemplateJson): string[] {
  const configs = resourcesOf(template, "AWS::Lambda::EventInvokeConfig").map(([, c]) => c.Properties ?? {});
  const problems: string[] = [];
  for (const [id, rule] of resourcesOf(template, "AWS::Events::Rule"))
    for (const target of (rule.Properties?.Targets as Array<{ Arn: unknown }> | undefined) ?? []) {
      const fn = (target.Arn as { "Fn::GetAtt"?: [string, string] })["Fn::GetAtt"]?.[0];
      if (!fn) continue;
      const config = configs.find((c) => text(c.FunctionName) === text({ Ref: fn }));
      if (config?.MaximumRetryAttempts !== 0)
        problems.push(`${fn} (a target of ${id}): Lambda retries its asynchronous invocations`);
    }
  return problems;
}

/**
 * Check (#60): a KMS key that admits a service principal admits it for this account's resources
 * only (`aws:SourceAccount`), and no bucket takes a canned ACL (S3 log delivery by bucket policy).
 */
export function servicePrincipalProblems(template: TemplateJson): string[] {
  const problems: string[] = [];
  for (const [id, key] of resourcesOf(template, "AWS::KMS::Key")) {
    const statements =
      (key.Properties?.KeyPolicy as { Statement?: Array<Record<string, unknown>> } | undefined)?.Statement ??
      [];
    for (const s of statements)
      if (
        text(s.Principal).includes("cloudwatch.amazonaws.com") &&
        (s.Condition as { StringEquals?: Record<string, unknown> } | undefined)?.StringEquals?.[
          "aws:SourceAccount"
        ] === undefined
      )
        problems.push(`${id}: CloudWatch may use the key for any account's alarm (no aws:SourceAccount)`);
  }
  for (const [id, bucket] of resourcesOf(template, "AWS::S3::Bucket"))
    if (bucket.Properties?.AccessControl !== undefined)
      problems.push(`${id}: a canned ACL (${text(bucket.Properties.AccessControl)}), not a bucket policy`);
  return problems;
}

/** The resource types a changed option must never replace nor take out of the stack. */
const DATA_TYPES = [
  "AWS::DynamoDB::Table",
  "AWS::S3::Bucket",
  "AWS::SQS::Queue",
  "AWS::SecretsManager::Secret",
];

/**
 * Check (#60): going from one template to the other replaces no table, bucket, queue or secret,
 * and takes no table or bucket out of the stack (`@aws-cdk/cloudformation-diff`, the diff
 * `cdk diff` prints, with CloudFormation's replacement rules per property).
 */
export function replacementProblems(before: TemplateJson, after: TemplateJson): string[] {
  const problems: string[] = [];
  fullDiff(before, after).resources.forEachDifference((id, change) => {
    const type = change.resourceType ?? "";
    if (!DATA_TYPES.includes(type)) return;
    const impact = change.changeImpact;
    if (impact === ResourceImpact.WILL_REPLACE || impact === ResourceImpact.MAY_REPLACE)
      problems.push(`${id} (${type}) ${impact}`);
    else if (change.isRemoval && (type === "AWS::DynamoDB::Table" || type === "AWS::S3::Bucket"))
      problems.push(`${id} (${type}) leaves the stack (${impact})`);
  });
  return problems;
}
