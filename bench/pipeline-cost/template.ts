/**
 * What the synthesized stack says the bill is priced with, read from its template rather than
 * typed: each function's memory (Lambda's GB-seconds), the access log's and the log groups'
 * retention, and the month's fixed costs (alarms by the metrics they evaluate, the custom metrics
 * they and the metric filters name, dashboards, Contributor Insights rules, secrets, KMS keys).
 * `bench:cost` and `bench:activity` synthesize the default stack once (`synthesizeStack`);
 * `test/unit/whole-bill.test.ts` checks these readings and docs/capacity-and-cost.md against it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { buildApp } from "../../infra/app";
import type { Deployed } from "./model";

/** A resource of a synthesized template, as CloudFormation reads it. */
export interface TemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
}
export interface TemplateJson {
  Resources: Record<string, TemplateResource>;
}

/** The stack as `cdk synth` makes it with `context` (cdk-nag runs in it), as JSON. */
export function synthesizeStack(context: Record<string, unknown> = {}): TemplateJson {
  // As cdk.json says (#60): the alarms' destination changes no price.
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), "bench-synth-")),
    context: { alarms: "none", ...context },
  });
  const { stack } = buildApp(app);
  app.synth();
  return Template.fromStack(stack).toJSON() as TemplateJson;
}

const ofType = (t: TemplateJson, type: string) =>
  Object.entries(t.Resources).filter(([, r]) => r.Type === type);

type Props = Record<string, unknown>;
const props = (r: TemplateResource) => (r.Properties ?? {}) as Props;

/** A function's configured memory, MB, by its Powertools service name. */
function memoryOf(t: TemplateJson, service: string): number {
  for (const [, r] of ofType(t, "AWS::Lambda::Function")) {
    const p = props(r) as { MemorySize?: number; Environment?: { Variables?: Record<string, unknown> } };
    if (p.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === service) return p.MemorySize ?? 128;
  }
  throw new Error(`no function of service ${service} in the template`);
}

/** The data bucket (the versioned one, logging to the other) and its access-log bucket's expiry, days. */
function accessLogDays(t: TemplateJson): number {
  const buckets = ofType(t, "AWS::S3::Bucket");
  const data = buckets.find(([, r]) => props(r).LoggingConfiguration);
  const target = (
    props(data?.[1] ?? { Type: "" }).LoggingConfiguration as { DestinationBucketName?: { Ref?: string } }
  )?.DestinationBucketName?.Ref;
  const logs = buckets.find(([id]) => id === target)?.[1];
  const rules = ((props(logs ?? { Type: "" }).LifecycleConfiguration as { Rules?: Props[] })?.Rules ??
    []) as Array<{
    ExpirationInDays?: number;
  }>;
  const days = rules.map((r) => r.ExpirationInDays).find((d) => d !== undefined);
  if (days === undefined)
    throw new Error("the access-log bucket has no expiry: its records are kept forever");
  return days;
}

/** The retention of the functions' log groups, days (the most common; all are `logRetentionDays`). */
function logRetention(t: TemplateJson): number {
  const days = ofType(t, "AWS::Logs::LogGroup").map(([, r]) => Number(props(r).RetentionInDays));
  return days.sort((a, b) => days.filter((d) => d === b).length - days.filter((d) => d === a).length)[0] ?? 0;
}

/** What a run's counts are priced with, from the template. */
export function deployedFrom(t: TemplateJson): Deployed {
  return {
    memoryMb: { ingest: memoryOf(t, "ingest"), projector: memoryOf(t, "projector") },
    accessLogDays: accessLogDays(t),
    logRetentionDays: logRetention(t),
  };
}

/** A metric as CloudWatch bills it: namespace, name and dimensions. */
type MetricRef = {
  Namespace?: string;
  MetricName?: string;
  Dimensions?: Array<{ Name: string; Value: unknown }>;
};
const metricKey = (m: MetricRef) =>
  `${m.Namespace}|${m.MetricName}|${(m.Dimensions ?? [])
    .map((d) => `${d.Name}=${String(d.Value)}`)
    .sort()
    .join(",")}`;

/**
 * The custom metrics a log line emits in CloudWatch's embedded metric format: one per metric
 * name and dimension set, keyed as `monitoringCounts` keys the template's.
 */
export function emfMetricKeys(line: Record<string, unknown>): string[] {
  const aws = line._aws as
    | {
        CloudWatchMetrics?: Array<{
          Namespace: string;
          Dimensions: string[][];
          Metrics: Array<{ Name: string }>;
        }>;
      }
    | undefined;
  return (aws?.CloudWatchMetrics ?? []).flatMap((d) =>
    d.Metrics.flatMap((m) =>
      (d.Dimensions.length ? d.Dimensions : [[]]).map((set) =>
        metricKey({
          Namespace: d.Namespace,
          MetricName: m.Name,
          Dimensions: set.map((name) => ({ Name: name, Value: line[name] })),
        }),
      ),
    ),
  );
}

/**
 * The template's CloudWatch and the like, counted: alarms, the metrics they evaluate (a metric-math
 * alarm is billed per metric of its expression), the custom metrics (not `AWS/…`) named by the
 * alarms and the metric filters, dashboards, Contributor Insights rules, secrets and KMS keys.
 */
export function monitoringCounts(t: TemplateJson) {
  const custom = new Set<string>();
  let alarmMetrics = 0;
  let highResolution = 0;
  for (const [, r] of ofType(t, "AWS::CloudWatch::Alarm")) {
    const p = props(r) as MetricRef & {
      Metrics?: Array<{ MetricStat?: { Metric: MetricRef; Period?: number } }>;
      Period?: number;
    };
    const metrics = p.Metrics
      ? p.Metrics.flatMap((m) =>
          m.MetricStat ? [{ ...m.MetricStat.Metric, period: m.MetricStat.Period }] : [],
        )
      : [{ ...p, period: p.Period }];
    for (const m of metrics) {
      alarmMetrics++;
      if ((m.period ?? 60) < 60) highResolution++;
      if (m.Namespace && !m.Namespace.startsWith("AWS/")) custom.add(metricKey(m));
    }
  }
  for (const [, r] of ofType(t, "AWS::Logs::MetricFilter"))
    for (const m of (props(r).MetricTransformations ?? []) as Array<{
      MetricNamespace: string;
      MetricName: string;
    }>)
      custom.add(metricKey({ Namespace: m.MetricNamespace, MetricName: m.MetricName }));
  return {
    alarms: ofType(t, "AWS::CloudWatch::Alarm").length,
    compositeAlarms: ofType(t, "AWS::CloudWatch::CompositeAlarm").length,
    alarmMetrics,
    highResolution,
    customMetrics: custom,
    dashboards: ofType(t, "AWS::CloudWatch::Dashboard").length,
    insightRules: ofType(t, "AWS::CloudWatch::InsightRule").length,
    secrets: ofType(t, "AWS::SecretsManager::Secret").length,
    kmsKeys: ofType(t, "AWS::KMS::Key").length,
  };
}

/** us-east-1 list prices of the month's fixed items, USD a month. */
export const MONTHLY_PRICE = {
  /** A standard-resolution alarm, per metric it evaluates. */
  alarmMetric: 0.1,
  highResolutionAlarmMetric: 0.3,
  compositeAlarm: 0.5,
  /** A custom metric (the first 10,000), when emitted every hour of the month. */
  customMetric: 0.3,
  /** A dashboard beyond the account's first three (free). */
  dashboard: 3,
  insightRule: 0.5,
  secret: 0.4,
  kmsKey: 1,
};

/** The month's fixed items of a template, each with its count and $ a month (the same at any number of apps). */
export function fixedMonthlyLines(t: TemplateJson) {
  const c = monitoringCounts(t);
  const P = MONTHLY_PRICE;
  return [
    {
      item: `alarms: ${c.alarms} (${c.alarmMetrics} metrics evaluated)`,
      usd:
        (c.alarmMetrics - c.highResolution) * P.alarmMetric +
        c.highResolution * P.highResolutionAlarmMetric +
        c.compositeAlarms * P.compositeAlarm,
    },
    {
      item: `custom metrics named by alarms and metric filters: ${c.customMetrics.size} (each emitted every hour: at most)`,
      usd: c.customMetrics.size * P.customMetric,
    },
    {
      item: `dashboards: ${c.dashboards} (free within the account's first 3)`,
      usd: c.dashboards * P.dashboard,
    },
    { item: `Contributor Insights rules: ${c.insightRules}`, usd: c.insightRules * P.insightRule },
    { item: `Secrets Manager secrets: ${c.secrets}`, usd: c.secrets * P.secret },
    { item: `KMS keys: ${c.kmsKeys}`, usd: c.kmsKeys * P.kmsKey },
  ];
}
