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
};

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
export function costLines(c: RunCounts, p: { logBytes: number; traces: number }) {
  const { n } = c;
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
  ].map((l) => ({ ...l, perMillion: l.perEvent * l.usd * 1e6 }));
}

export const sumPerMillion = (ls: ReturnType<typeof costLines>) => ls.reduce((s, l) => s + l.perMillion, 0);
