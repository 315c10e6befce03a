/**
 * The cost bench's model: the run's size and rate (BENCH_EVENTS, BENCH_RATE, BENCH_APPS), the
 * us-east-1 list prices, Lambda's own lines and X-Ray's sampling per invocation, the access log
 * line, and how a run's counts become each priced item per event and per million events.
 */
import { SystemLogLevel } from "aws-cdk-lib/aws-lambda";
import { ACCESS_LOG_FORMAT } from "../../infra/constructs/webhook-ingest";
import { DYNAMO_PRICE } from "../capacity";

export const EVENTS = Number(process.env.BENCH_EVENTS ?? 3000);
/** The steady traffic at which X-Ray's sampling is priced (100/s: 8.6 million events a day). */
export const RATE = Number(process.env.BENCH_RATE ?? 100);
/** The apps the second run spreads the same number of events over (Zipf-like weights). */
export const APPS = Number(process.env.BENCH_APPS ?? 1000);

/** us-east-1 list prices, USD. */
export const PRICE = {
  httpApiRequest: 1.0 / 1e6,
  lambdaRequest: 0.2 / 1e6,
  sqsRequest: 0.4 / 1e6,
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  dynamoWriteUnit: DYNAMO_PRICE.onDemandWriteUnit,
  dynamoReadUnit: DYNAMO_PRICE.onDemandReadUnit,
  logByte: 0.5 / 1024 ** 3,
  xrayTrace: 5.0 / 1e6,
  /** Standard SNS: a request is each 64 KiB chunk of a publish (delivery to SQS is free). */
  snsChunk: 0.5 / 1e6,
  /** Lambda duration, arm64 (the stack's architecture), per GB-second. */
  lambdaGbSecond: 0.0000133334,
  /** S3 Standard storage, per GB-month (the access log's records are stored there). */
  s3GbMonth: 0.023,
  /** CloudWatch Logs storage, per GB-month (billed on compressed bytes: the raw bytes are an upper bound). */
  logGbMonth: 0.03,
};

/** Days in an average month: a month's storage of a record kept `days` is days / this. */
export const DAYS_A_MONTH = 365 / 12;

/**
 * One record of the data bucket's server access log (S3's documented format, typical values: a
 * projector's PUT of an archive object): every request to the bucket writes one, kept as long as
 * the access-log bucket's lifecycle keeps it (`retainAccessLogDays`). S3 charges nothing to
 * deliver it; it is billed as stored bytes.
 */
export const ACCESS_LOG_RECORD = [
  "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be webhookbackend-prod-databucket1a2b3c4d5e6f-1a2b3c4d5e6f",
  "[29/Nov/2026:06:40:12 +0000] 10.0.12.34",
  "arn:aws:sts::123456789012:assumed-role/WebhookBackend-prod-ProjectorFunctionServiceRole-AbCdEfGhIjKl/WebhookBackend-prod-ProjectorFunction-AbCdEfGhIjKl",
  "3E57427F3EXAMPLE REST.PUT.OBJECT raw/date=2026-11-29/hour=06/3f2a9c1e4b7d8a6f0e5c2b1a9d8e7f6c5b4a3d2e1f0a9b8c7d6e5f4a3b2c1d0e.ndjson.gz",
  '"PUT /raw/date=2026-11-29/hour=06/3f2a9c1e4b7d8a6f0e5c2b1a9d8e7f6c5b4a3d2e1f0a9b8c7d6e5f4a3b2c1d0e.ndjson.gz HTTP/1.1" 200 - - 4213 21 9 "-"',
  '"aws-sdk-js/3.1169.0 ua/2.1 os/linux#5.10 lang/js md/nodejs#24.11.0 api/s3#3.1169.0 m/E,N exec-env/AWS_Lambda_nodejs24.x"',
  "- Yz8bKbdX8jKk3oDSXwG3bP2OrYy0Zl9bHmEXAMPLEu6aIzX5oZ1Zb1Hh9aB6Xj0Xq2Zc= SigV4 TLS_AES_128_GCM_SHA256 AuthHeader",
  "webhookbackend-prod-databucket1a2b3c4d5e6f-1a2b3c4d5e6f.s3.us-east-1.amazonaws.com TLSv1.3 - -",
].join(" ");
export const ACCESS_LOG_RECORD_BYTES = Buffer.byteLength(ACCESS_LOG_RECORD) + 1;

/** $ of `records` access-log records kept `days` days (stored bytes × months kept). */
export function accessLogUsd(records: number, days: number): number {
  return ((records * ACCESS_LOG_RECORD_BYTES) / 1024 ** 3) * PRICE.s3GbMonth * (days / DAYS_A_MONTH);
}

/** Lambda's billed duration of an invocation measured at `ms`: rounded up to the millisecond. */
export const billedMs = (ms: number) => Math.ceil(ms);

/** GB-seconds of `ms` billed milliseconds at a function's configured memory. */
export function gbSeconds(ms: number, memoryMb: number): number {
  return (ms / 1000) * (memoryMb / 1024);
}

/** What the deployment configures that a run's counts are priced with (the synthesized template's values). */
export interface Deployed {
  /** Each function's configured memory, MB, by service. */
  memoryMb: { ingest: number; projector: number };
  /** How long the data bucket's access log keeps a record, days. */
  accessLogDays: number;
  /** How long the functions' log groups keep a line, days. */
  logRetentionDays: number;
}

/** Lambda's own lines per invocation at system log level INFO, in the JSON log format (typical values). */
const PLATFORM_LINES = [
  {
    time: "2026-11-22T16:00:05.123Z",
    type: "platform.start",
    record: { requestId: "6d68ca91-49c9-448d-89b8-7ca3e6dc66aa", version: "$LATEST" },
  },
  {
    time: "2026-11-22T16:00:05.141Z",
    type: "platform.report",
    record: {
      requestId: "6d68ca91-49c9-448d-89b8-7ca3e6dc66aa",
      metrics: { durationMs: 17.52, billedDurationMs: 18, memorySizeMB: 256, maxMemoryUsedMB: 94 },
      tracing: {
        spanId: "3b5f3ad6a1b8e2c4",
        type: "X-Amzn-Trace-Id",
        value: "Root=1-6740a9e5-1d3b6a0f4c2e8b7d9a5f3c1e;Parent=3b5f3ad6a1b8e2c4;Sampled=1",
      },
      status: "success",
    },
  },
];
const PLATFORM_BYTES_PER_INVOCATION = PLATFORM_LINES.reduce(
  (s, l) => s + Buffer.byteLength(JSON.stringify(l)) + 1,
  0,
);

/** Traces per invocation when a function is invoked `perSecond` times a second (Lambda's default sampling). */
function sampledShare(perSecond: number): number {
  return perSecond <= 1 ? 1 : (1 + 0.05 * (perSecond - 1)) / perSecond;
}

/** The access log line API Gateway writes for a request (the stack's format, typical values). */
function accessLogBytes(): number {
  const line = Object.fromEntries(
    Object.entries(ACCESS_LOG_FORMAT).map(([k, v]) => [k, SAMPLE[v as keyof typeof SAMPLE] ?? "-"]),
  );
  return Buffer.byteLength(JSON.stringify(line)) + 1;
}

const SAMPLE = {
  "$context.requestId": "Jx2aBhO5IAMEVfQ=",
  "$context.identity.sourceIp": "203.0.113.40",
  "$context.requestTimeEpoch": "1795358700123",
  "$context.status": "200",
  "$context.responseLatency": "23",
  "$context.integrationErrorMessage": "-",
};

/** What a run counted, per event (`n` deliveries). */
export interface RunCounts {
  n: number;
  sqsSends: number;
  sqsOther: number;
  s3Puts: number;
  s3Gets: number;
  writeUnits: number;
  readUnits: number;
  logs: number;
  projectorInvocations: number;
  /** The stream's `PublishBatch` requests, their entries and the 64 KiB chunks SNS bills them as. */
  publishRequests: number;
  publishEntries: number;
  publishChunks: number;
  /** Requests of any kind to the data bucket (each writes one access-log record). */
  s3Requests: number;
  /** The handlers' measured time, ms, summed over their invocations (each rounded up to the ms). */
  ingestMs: number;
  projectorMs: number;
}

/** Lambda's own lines and X-Ray traces per event, for a given ingest setting (the workers: INFO, traced). */
export function platformShare(
  perInvocation: number,
  ingest: { systemLogLevel: SystemLogLevel; traced: boolean },
) {
  return {
    logBytes:
      ((ingest.systemLogLevel === SystemLogLevel.WARN ? 0 : 1) + perInvocation) *
      PLATFORM_BYTES_PER_INVOCATION,
    traces: (ingest.traced ? sampledShare(RATE) : 0) + perInvocation * sampledShare(RATE * perInvocation),
  };
}

/** Each priced item per event and per million events. */
export function costLines(c: RunCounts, p: { logBytes: number; traces: number }, d: Deployed) {
  const { n } = c;
  const logBytes = c.logs / n + accessLogBytes() + p.logBytes;
  return [
    { item: "HTTP API requests", perEvent: 1, usd: PRICE.httpApiRequest },
    { item: "ingest invocations", perEvent: 1, usd: PRICE.lambdaRequest },
    { item: "SQS sends", perEvent: c.sqsSends / n, usd: PRICE.sqsRequest },
    { item: "SQS receives and deletes", perEvent: c.sqsOther / n, usd: PRICE.sqsRequest },
    { item: "projector invocations", perEvent: c.projectorInvocations / n, usd: PRICE.lambdaRequest },
    { item: "S3 PUT-class requests", perEvent: c.s3Puts / n, usd: PRICE.s3Put },
    { item: "S3 GET-class requests", perEvent: c.s3Gets / n, usd: PRICE.s3Get },
    { item: "DynamoDB write units", perEvent: c.writeUnits / n, usd: PRICE.dynamoWriteUnit },
    { item: "DynamoDB read units", perEvent: c.readUnits / n, usd: PRICE.dynamoReadUnit },
    { item: "log bytes: functions (JSON, EMF)", perEvent: c.logs / n, usd: PRICE.logByte },
    { item: "log bytes: API access log", perEvent: accessLogBytes(), usd: PRICE.logByte },
    { item: "log bytes: Lambda start/report lines", perEvent: p.logBytes, usd: PRICE.logByte },
    { item: `X-Ray traces (at ${RATE} events/s)`, perEvent: p.traces, usd: PRICE.xrayTrace },
    { item: "stream: SNS publish (64 KiB chunks)", perEvent: c.publishChunks / n, usd: PRICE.snsChunk },
    {
      added: true,
      item: `Lambda duration: ingest, GB-s (${(c.ingestMs / n).toFixed(2)} ms at ${d.memoryMb.ingest} MB)`,
      perEvent: gbSeconds(c.ingestMs, d.memoryMb.ingest) / n,
      usd: PRICE.lambdaGbSecond,
    },
    {
      added: true,
      item: `Lambda duration: projector, GB-s (${(c.projectorMs / Math.max(1, c.projectorInvocations)).toFixed(0)} ms a batch at ${d.memoryMb.projector} MB)`,
      perEvent: gbSeconds(c.projectorMs, d.memoryMb.projector) / n,
      usd: PRICE.lambdaGbSecond,
    },
    {
      added: true,
      item: `S3 access log: records (${ACCESS_LOG_RECORD_BYTES} B each, kept ${d.accessLogDays} days)`,
      perEvent: c.s3Requests / n,
      usd: accessLogUsd(1, d.accessLogDays),
    },
    {
      added: true,
      item: `log storage: bytes kept ${d.logRetentionDays} days (uncompressed: at most)`,
      perEvent: logBytes,
      usd: (PRICE.logGbMonth / 1024 ** 3) * (d.logRetentionDays / DAYS_A_MONTH),
    },
  ].map((l) => ({ added: false, ...l, perMillion: l.perEvent * l.usd * 1e6 }));
}

export const sumPerMillion = (ls: ReturnType<typeof costLines>) => ls.reduce((s, l) => s + l.perMillion, 0);
/** The same sum without the items #59 added (Lambda duration, the access log, log storage): the bill as counted before. */
export const countedBefore = (ls: ReturnType<typeof costLines>) =>
  ls.filter((l) => !l.added).reduce((s, l) => s + l.perMillion, 0);
