/**
 * The pipeline's price per event, measured: the real ingest and projector against the emulators
 * behind counting proxies (`startBench`), a run of the simulator's mix (`measure`), priced at list
 * prices. `npm run bench:cost` prints it (bench/cost.ts); `npm run bench:activity` measures the
 * one-app figure in its own run, next to what the rollups add.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { DeleteItemCommand } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { CreateTopicCommand } from "@aws-sdk/client-sns";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { SystemLogLevel } from "aws-cdk-lib/aws-lambda";
import type { APIGatewayProxyEventV2, Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { readDeploymentConfig, tableCapacity } from "../infra/config";
import type { ProvisionedCapacity } from "../infra/constructs/projection-tables";
import { ACCESS_LOG_FORMAT } from "../infra/constructs/webhook-ingest";
import { INGEST_SYSTEM_LOG_LEVEL } from "../infra/stack";
import { ingestEnvironment, projectorEnvironment } from "../shared/config/function-environment";
import { LISTENER_SWITCH_KEY, turnListenersOn } from "../shared/stream/listener-switch";
import { billedChunks } from "../shared/stream/publish-batches";
import { subscribeQueue } from "../shared/stream/subscriptions";
import { emulatorClients } from "../tools/local/clients";
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal } from "../tools/local/emulators";
import { SqsPoller } from "../tools/local/poller";
import {
  createAppsTable,
  createProjectionTables,
  localAppsTableName,
  localTableNames,
} from "../tools/local/provision";
import { deliveryPlan, generateHistory, zipfWeights } from "../tools/simulate/generator";
import {
  breakEvenRate,
  breakEvenUtilisation,
  capacityResources,
  consumedCapacityMeter,
  DYNAMO_PRICE,
  onDemandPerMillion,
  provisionedAt,
  provisionedMonthlyMinimum,
  provisionedPerMillion,
  type ResourceUnits,
} from "./capacity";
import { batchAtRate, CONCURRENT_BATCHES, startFauxqsProcess } from "./support";

export const EVENTS = Number(process.env.BENCH_EVENTS ?? 3000);
/** The steady traffic at which X-Ray's sampling is priced (100/s: 8.6 million events a day). */
const RATE = Number(process.env.BENCH_RATE ?? 100);
/** The apps the second run spreads the same number of events over (Zipf-like weights). */
export const APPS = Number(process.env.BENCH_APPS ?? 1000);

/** us-east-1 list prices, USD. */
const PRICE = {
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

/**
 * Both capacity modes at BENCH_RATE: per table and index what auto scaling provisions (the
 * deployment's defaults for provisioned mode), then $ per million events in each mode, the fixed
 * monthly minimum and where provisioned starts to win.
 */
function printCapacityModes(perEvent: ResourceUnits[], onDemandTotal: number, onDemandDynamo: number) {
  const config = readDeploymentConfig({ capacityMode: "provisioned" });
  const capacity = tableCapacity(config) as ProvisionedCapacity;
  const sized = provisionedAt(perEvent, RATE, capacity);
  console.log(
    `DynamoDB capacity at ${RATE} events/s; provisioned: target ${capacity.targetPercent}%, ${capacity.minWriteUnits}-${capacity.maxWriteUnits} write and ${capacity.minReadUnits}-${capacity.maxReadUnits} read units per table and index (the capacity* defaults)`,
  );
  console.table(
    sized.map((r) => ({
      "table or index": r.resource,
      "write units / event": Number(r.write.toFixed(4)),
      "WCU provisioned": r.writeUnits,
      "read units / event": Number(r.read.toFixed(4)),
      "RCU provisioned": r.readUnits,
      "$ a month": Number((r.usdPerHour * 730).toFixed(2)),
    })),
  );
  // The meter reads DynamoDB's answers; the table above uses the projector's own metric: the same units.
  const metered = onDemandPerMillion(perEvent);
  const provisioned = provisionedPerMillion(perEvent, RATE, capacity);
  const total = onDemandTotal - onDemandDynamo + provisioned;
  const resources = capacityResources().length;
  const p = DYNAMO_PRICE;
  console.log(
    `prices (us-east-1, DynamoDB Standard): on demand $${p.onDemandWriteUnit * 1e6} per million write request units, $${p.onDemandReadUnit * 1e6} per million read request units; provisioned $${p.writeUnitHour} per WCU-hour, $${p.readUnitHour} per RCU-hour`,
  );
  console.log(
    `on-demand: $${onDemandTotal.toFixed(2)} per million events (DynamoDB $${onDemandDynamo.toFixed(3)}; from DynamoDB's own answers $${metered.toFixed(3)})`,
  );
  console.log(
    `provisioned at ${RATE} events/s: $${total.toFixed(2)} per million events (DynamoDB $${provisioned.toFixed(3)}, ${(onDemandDynamo / provisioned).toFixed(1)}x less)${sized.some((r) => r.overMax) ? "; some table or index above its maximum: throttled" : ""}`,
  );
  console.log(
    `provisioned fixed minimum: $${provisionedMonthlyMinimum(resources, capacity).toFixed(2)} a month (${resources} tables and indexes at ${capacity.minWriteUnits} WCU and ${capacity.minReadUnits} RCU each)`,
  );
  const perUnitAtTarget = p.writeUnitHour / 3600 / (capacity.targetPercent / 100);
  console.log(
    `provisioned wins above ${(breakEvenUtilisation() * 100).toFixed(1)}% utilisation (consumed / provisioned units; a write unit is $${((p.writeUnitHour / 3600) * 1e6).toFixed(3)} per million at 100%, $${(perUnitAtTarget * 1e6).toFixed(3)} at ${capacity.targetPercent}%); on this mix at target ${capacity.targetPercent}% from ${breakEvenRate(perEvent, capacity)} events/s`,
  );
}

/** Traces per invocation when a function is invoked `perSecond` times a second (Lambda's default sampling). */
function sampledShare(perSecond: number): number {
  return perSecond <= 1 ? 1 : (1 + 0.05 * (perSecond - 1)) / perSecond;
}

/**
 * An SNS request (the query protocol: a form body): its action, and for a `PublishBatch` its
 * entries and the 64 KiB chunks SNS bills it as (messages and their attributes).
 */
function snsRequest(body: string): { op: string; entries: number; chunks: number } {
  const form = new URLSearchParams(body);
  const op = `sns:${form.get("Action") ?? "?"}`;
  if (op !== "sns:PublishBatch") return { op, entries: 0, chunks: 0 };
  let bytes = 0;
  let entries = 0;
  for (const [key, value] of form) {
    if (/^PublishBatchRequestEntries\.member\.\d+\.Message$/.test(key)) {
      entries++;
      bytes += Buffer.byteLength(value);
    } else if (/\.MessageAttributes\.entry\.\d+\.(Name|Value\.DataType|Value\.StringValue)$/.test(key))
      bytes += Buffer.byteLength(value);
  }
  return { op, entries, chunks: billedChunks(bytes) };
}

/**
 * A proxy that counts the AWS operations passing through it (and, for SNS's `PublishBatch`, its
 * entries and billed chunks: `sns:entries`, `sns:chunks`), and hands each answer's body to `onAnswer`.
 */
export async function countingProxy(target: string, onAnswer?: (op: string, body: Buffer) => void) {
  const counts = new Map<string, number>();
  const upstream = new URL(target);
  const add = (name: string, n = 1) => counts.set(name, (counts.get(name) ?? 0) + n);
  const server = http.createServer(async (req, res) => {
    const amzTarget = req.headers["x-amz-target"];
    let op: string;
    let body: Buffer | undefined;
    if (typeof amzTarget === "string") op = amzTarget.split(".").pop() ?? amzTarget;
    else if (String(req.headers["content-type"]).includes("x-www-form-urlencoded")) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      body = Buffer.concat(chunks);
      const sns = snsRequest(body.toString("utf8"));
      op = sns.op;
      add("sns:entries", sns.entries);
      add("sns:chunks", sns.chunks);
    } else {
      // S3 (REST): PUT, COPY, POST and LIST are priced as PUTs; GET and HEAD as GETs.
      const list = req.method === "GET" && /[?&](list-type|prefix)=/.test(req.url ?? "");
      op = list ? "s3:List" : `s3:${req.method}`;
    }
    // Bodies fauxqs refuses (characters outside the BMP, which real SQS accepts) take the S3
    // path: those sends and oversize objects are the emulator's, not AWS's, and counted apart.
    if (op.startsWith("s3:") && (req.url ?? "").includes("/oversize/")) op = "s3:emulator-oversize";
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        const name = (answer.statusCode ?? 500) >= 400 ? `${op}:refused` : op;
        add(name);
        res.writeHead(answer.statusCode ?? 500, answer.headers);
        if (onAnswer) {
          const chunks: Buffer[] = [];
          answer.on("data", (c: Buffer) => chunks.push(c));
          answer.on("end", () => onAnswer(name, Buffer.concat(chunks)));
        }
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.writeHead(502).end());
    if (body) forward.end(body);
    else req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Counts the bytes of the functions' log lines (JSON and EMF) written while `run` runs, and keeps them off the terminal. */
async function capturingLogs<T>(run: () => Promise<T>) {
  const bytes = { logs: 0, writeUnits: 0, readUnits: 0 };
  const tap = (stream: NodeJS.WriteStream) => {
    const original = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      for (const line of text.split("\n")) {
        if (!line.startsWith("{")) continue;
        bytes.logs += Buffer.byteLength(line) + 1;
        const entry = JSON.parse(line) as { ProjectorWriteUnits?: number; ProjectorReadUnits?: number };
        bytes.writeUnits += entry.ProjectorWriteUnits ?? 0;
        bytes.readUnits += entry.ProjectorReadUnits ?? 0;
      }
      return true;
    }) as typeof stream.write;
    return () => {
      stream.write = original;
    };
  };
  const restores = [tap(process.stdout), tap(process.stderr)];
  try {
    return { result: await run(), ...bytes };
  } finally {
    for (const restore of restores) restore();
  }
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

function apiEvent(body: string, receivedAt: number): APIGatewayProxyEventV2 {
  return {
    version: "2.0",
    routeKey: "POST /webhook",
    rawPath: "/webhook",
    rawQueryString: "",
    headers: {
      authorization: `Basic ${Buffer.from("bench:bench-password").toString("base64")}`,
      "content-type": "application/json",
    },
    body,
    isBase64Encoded: false,
    requestContext: {
      http: { method: "POST" },
      timeEpoch: receivedAt,
    } as APIGatewayProxyEventV2["requestContext"],
  };
}

/** The emulators behind counting proxies, the queues, bucket and tables, and the real handlers wired to them. */
export async function startBench() {
  const [dynamoLocal, fauxqs] = await Promise.all([startDynamoDbLocal(), startFauxqsProcess()]);
  const aws = await countingProxy(fauxqs.endpoint);
  const tables = localTableNames("cost");
  const meter = consumedCapacityMeter(tables);
  const dynamodb = await countingProxy(dynamoLocal.endpoint, meter.onAnswer);
  const deployed = readDeploymentConfig({});
  const direct = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
  const stop = async () => {
    direct.destroy();
    await Promise.all([aws.close(), dynamodb.close()]);
    await Promise.all([dynamoLocal.stop(), fauxqs.stop()]);
  };
  try {
    await createProjectionTables(direct.dynamo, tables);
    await direct.s3.send(new CreateBucketCommand({ Bucket: "cost" }));
    const events = await direct.sqs.send(new CreateQueueCommand({ QueueName: "cost-events" }));
    const recordings = await direct.sqs.send(new CreateQueueCommand({ QueueName: "cost-recordings" }));
    // The stream (#41): a topic with one subscriber, its unpublished queue, and the listener switch
    // (the apps table) that each run turns on or off (`measure`'s `stream`).
    const appsTable = localAppsTableName("cost");
    await createAppsTable(direct.dynamo, appsTable);
    const topicArn = (await direct.sns.send(new CreateTopicCommand({ Name: "cost-stream" }))).TopicArn ?? "";
    const subscriber = await subscribeQueue(direct.sns, direct.sqs, {
      topicArn,
      queueName: "cost-subscriber",
      rawDelivery: true,
    });
    const unpublished = await direct.sqs.send(new CreateQueueCommand({ QueueName: "cost-unpublished" }));
    const eventsQueue = {
      url: events.QueueUrl ?? "",
      arn:
        (
          await direct.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: events.QueueUrl, AttributeNames: ["QueueArn"] }),
          )
        ).Attributes?.QueueArn ?? "",
    };
    Object.assign(process.env, {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      LOCAL_AWS_ENDPOINT: aws.endpoint,
      LOCAL_DYNAMODB_ENDPOINT: dynamodb.endpoint,
      ...ingestEnvironment({
        eventsQueueUrl: eventsQueue.url,
        dataBucket: "cost",
        localCredentials: { username: "bench", password: "bench-password" },
      }),
      ...projectorEnvironment({
        tables,
        dataBucket: "cost",
        recordingsQueueUrl: recordings.QueueUrl ?? "",
        stream: {
          topicArn,
          unpublishedQueueUrl: unpublished.QueueUrl ?? "",
          alwaysOn: false,
          appsTable,
          switchCacheSeconds: 1,
        },
      }),
      POWERTOOLS_LOG_LEVEL: "INFO",
      POWERTOOLS_METRICS_NAMESPACE: "WebhookBackend",
    });
    const ingest = (await import("../functions/ingest/handler")).handler;
    const projector = (await import("../functions/projector/handler")).handler as (
      e: SQSEvent,
      c: Context,
    ) => Promise<SQSBatchResponse>;
    return {
      aws,
      dynamodb,
      stream: { appsTable, subscriberUrl: subscriber.queueUrl },
      meter,
      deployed,
      direct,
      eventsQueue,
      ingest,
      projector,
      // The batches the event source forms at RATE: full at high rates, cut by the window.
      batch: batchAtRate(deployed.projectorBatchSize, deployed.projectorBatchingWindowSeconds, RATE),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export type Bench = Awaited<ReturnType<typeof startBench>>;

/** The simulator's mix in one app (`app`), or spread over `appCount` apps with Zipf-like weights. */
function mixOver(appCount: number, events: number, app = "cost-app") {
  return appCount === 1
    ? generateHistory({ events, seed: 7, apps: [app] })
    : generateHistory({
        events,
        seed: 7,
        apps: Array.from({ length: appCount }, (_, i) => `tenant-${String(i + 1).padStart(5, "0")}`),
        appWeights: zipfWeights(appCount),
      });
}

/**
 * Posts every delivery to the ingest, then lets a poller (Lambda's event source) feed the
 * projector until the queue is empty; returns the log bytes and units counted, and the
 * projector's invocations.
 */
async function deliverAndDrain(bench: Bench, plan: readonly { body: string; at: number }[]) {
  let projectorInvocations = 0;
  const run = await capturingLogs(async () => {
    for (const [i, delivery] of plan.entries()) {
      const response = await bench.ingest(apiEvent(delivery.body, delivery.at + 200 + i));
      if (response.statusCode !== 200) throw new Error(`ingest answered ${response.statusCode}`);
    }
    const poller = new SqsPoller({
      sqs: emulatorClients({ aws: bench.aws.endpoint }).sqs,
      queueUrl: bench.eventsQueue.url,
      queueArn: bench.eventsQueue.arn,
      region: LOCAL_REGION,
      handler: (e, c) => {
        projectorInvocations++;
        return bench.projector(e, c);
      },
      functionName: "projector",
      batchSize: bench.batch,
      batchingWindowMs: bench.deployed.projectorBatchingWindowSeconds * 1000,
      concurrency: 1,
    });
    poller.start();
    await drained(bench);
    await poller.stop();
  });
  return { ...run, projectorInvocations };
}

/** Resolves once the events queue holds nothing, visible or in flight. */
async function drained(bench: Bench): Promise<void> {
  for (;;) {
    const a = (
      await bench.direct.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: bench.eventsQueue.url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
      )
    ).Attributes;
    if (Number(a?.ApproximateNumberOfMessages) + Number(a?.ApproximateNumberOfMessagesNotVisible) === 0)
      return;
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** What a run counted, per event (`n` deliveries). */
interface RunCounts {
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

/** The requests a run made, by kind, from the proxies' counts. */
function runCounts(bench: Bench, n: number, run: Awaited<ReturnType<typeof deliverAndDrain>>): RunCounts {
  const count = (...ops: string[]) => ops.reduce((s, op) => s + (bench.aws.counts.get(op) ?? 0), 0);
  return {
    n,
    sqsSends: count("SendMessage", "SendMessageBatch"),
    sqsOther: count("ReceiveMessage", "DeleteMessageBatch", "DeleteMessage", "ChangeMessageVisibility"),
    s3Puts: count("s3:PUT", "s3:POST", "s3:List"),
    s3Gets: count("s3:GET", "s3:HEAD"),
    writeUnits: run.writeUnits,
    readUnits: run.readUnits,
    logs: run.logs,
    projectorInvocations: run.projectorInvocations,
    publishRequests: count("sns:PublishBatch", "sns:Publish"),
    publishEntries: count("sns:entries"),
    publishChunks: count("sns:chunks"),
  };
}

/** Lambda's own lines and X-Ray traces per event, for a given ingest setting (the workers: INFO, traced). */
function platformShare(perInvocation: number, ingest: { systemLogLevel: SystemLogLevel; traced: boolean }) {
  return {
    logBytes:
      ((ingest.systemLogLevel === SystemLogLevel.WARN ? 0 : 1) + perInvocation) *
      PLATFORM_BYTES_PER_INVOCATION,
    traces: (ingest.traced ? sampledShare(RATE) : 0) + perInvocation * sampledShare(RATE * perInvocation),
  };
}

/** Each priced item per event and per million events. */
function costLines(c: RunCounts, p: { logBytes: number; traces: number }) {
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

const sumPerMillion = (ls: ReturnType<typeof costLines>) => ls.reduce((s, l) => s + l.perMillion, 0);

/**
 * Turns the stream on (a listener's switch, as `webhook listen` or a declared subscriber would
 * have it) or off (nothing listens: nothing is published), and waits out the projector's cache of it.
 */
async function setStream(bench: Bench, on: boolean): Promise<void> {
  const key = { appId: { S: LISTENER_SWITCH_KEY.appId }, record: { S: LISTENER_SWITCH_KEY.record } };
  if (on) await turnListenersOn(bench.direct.dynamo, bench.stream.appsTable, Date.now() + 86_400_000);
  else await bench.direct.dynamo.send(new DeleteItemCommand({ TableName: bench.stream.appsTable, Key: key }));
  await new Promise((r) => setTimeout(r, 1_100));
}

/**
 * One run of the mix over `appCount` apps, the stream on (one subscriber) or off: prints its
 * tables and returns its headline figures.
 */
export async function measure(
  bench: Bench,
  appCount: number,
  options: { events?: number; print?: boolean; stream?: boolean } = {},
) {
  await setStream(bench, options.stream ?? false);
  bench.aws.counts.clear();
  bench.dynamodb.counts.clear();
  for (const u of bench.meter.units.values()) Object.assign(u, { write: 0, read: 0 });
  // The stream's run is the same mix in an app of its own: its items are new, as the first run's were.
  const history = mixOver(appCount, options.events ?? EVENTS, options.stream ? "cost-stream-app" : undefined);
  const plan = deliveryPlan(history.events, { seed: 7, duplicateShare: 0.05, reorderShare: 0.1 });
  const counts = runCounts(bench, plan.length, await deliverAndDrain(bench, plan));
  const perInvocation = counts.projectorInvocations / counts.n;
  const lines = costLines(
    counts,
    platformShare(perInvocation, {
      systemLogLevel: INGEST_SYSTEM_LOG_LEVEL,
      traced: bench.deployed.ingestTracing,
    }),
  );
  const previous = costLines(
    counts,
    platformShare(perInvocation, { systemLogLevel: SystemLogLevel.INFO, traced: true }),
  );
  const apps = new Set(history.events.map((e) => e.appId)).size;
  if (options.print ?? true)
    printRun(bench, { appCount, apps, counts, lines, previous, stream: options.stream });
  const streamLine = lines.find((l) => l.item.startsWith("stream:"));
  return {
    apps,
    stream: options.stream ?? false,
    publishRequestsPerEvent: counts.publishRequests / counts.n,
    chunksPerEvent: counts.publishChunks / counts.n,
    batchFill: counts.publishRequests ? counts.publishEntries / counts.publishRequests : 0,
    streamUsdPerMillion: streamLine?.perMillion ?? 0,
    deliveries: counts.n,
    s3PutsPerDelivery: counts.s3Puts / counts.n,
    writeUnitsPerEvent: counts.writeUnits / counts.n,
    usdPerMillion: sumPerMillion(lines),
  };
}

/** A run's tables: each priced item, the total against the floor, both capacity modes, the requests counted. */
function printRun(
  bench: Bench,
  r: {
    appCount: number;
    apps: number;
    counts: RunCounts;
    lines: ReturnType<typeof costLines>;
    previous: ReturnType<typeof costLines>;
    stream?: boolean;
  },
): void {
  const { n } = r.counts;
  const { deployed } = bench;
  const floor = PRICE.httpApiRequest * 1e6 + PRICE.lambdaRequest * 1e6 + PRICE.sqsRequest * 1e6;
  const total = sumPerMillion(r.lines);
  console.log(
    `cost on the simulator's mix${r.stream ? ", the stream on with one subscriber" : ""}: ${n} deliveries of ${r.appCount === 1 ? "one app" : `${r.apps} of ${r.appCount} apps (Zipf-like weights)`} (5% duplicated, 10% reordered) at ${RATE} events/s; batches of ${bench.batch} (batch size ${deployed.projectorBatchSize}, window ${deployed.projectorBatchingWindowSeconds} s, ${CONCURRENT_BATCHES === 1 ? "one batch" : `${CONCURRENT_BATCHES} batches`} gathered at once)`,
  );
  console.table(
    r.lines.map((l) => ({
      "per event": l.item,
      count: Number(l.perEvent.toFixed(4)),
      "$ per million events": Number(l.perMillion.toFixed(4)),
    })),
  );
  console.log(
    `$ per million events: ${total.toFixed(2)}; floor (HTTP API + ingest invocation + SQS send): ${floor.toFixed(2)}; ratio ${(total / floor).toFixed(2)}`,
  );
  console.log(
    `previous defaults (the ingest traced, its start and report lines logged): ${sumPerMillion(r.previous).toFixed(2)}; ratio ${(sumPerMillion(r.previous) / floor).toFixed(2)}`,
  );
  printCapacityModes(
    [...bench.meter.units].map(([resource, u]) => ({ resource, write: u.write / n, read: u.read / n })),
    total,
    r.lines.filter((l) => l.item.startsWith("DynamoDB")).reduce((sum, l) => sum + l.perMillion, 0),
  );
  const c = r.counts;
  console.log(
    `stream: ${c.publishRequests} PublishBatch requests (${(c.publishRequests / n).toFixed(4)} per event), ${c.publishChunks} billed 64 KiB chunks (${(c.publishChunks / n).toFixed(4)} per event), ${c.publishRequests ? (c.publishEntries / c.publishRequests).toFixed(1) : "-"} entries per request of 10: $${((c.publishChunks / n) * PRICE.snsChunk * 1e6).toFixed(3)} per million events${r.stream ? "" : " (nothing listens: no SNS request, no client loaded)"}; the listener switch: one 0.5-unit read a minute per projector container`,
  );
  console.log(
    `recording jobs sent: ${(bench.aws.counts.get("SendMessage") ?? 0) - n} (each recording's cost follows its bytes); Lambda duration and custom-metric charges not included`,
  );
  console.log(
    "requests counted:",
    Object.fromEntries([...bench.aws.counts, ...bench.dynamodb.counts].sort()),
  );
}

/** One app and APPS apps side by side, and one app with the stream on (#41). */
export function printSideBySide(
  one: Awaited<ReturnType<typeof measure>>,
  many: Awaited<ReturnType<typeof measure>>,
  streamed: Awaited<ReturnType<typeof measure>>,
) {
  console.log(
    `one app and ${APPS} apps side by side, the same ${EVENTS} events; and one app with the stream on:`,
  );
  console.table(
    [
      { run: "1 app", ...one },
      { run: `${APPS} apps`, ...many },
      { run: "1 app, stream on (1 subscriber)", ...streamed },
    ].map((r) => ({
      run: r.run,
      "apps that sent": r.apps,
      deliveries: r.deliveries,
      "S3 PUTs per delivery": Number(r.s3PutsPerDelivery.toFixed(4)),
      "DynamoDB write units per event": Number(r.writeUnitsPerEvent.toFixed(3)),
      "publishes per event": Number(r.publishRequestsPerEvent.toFixed(4)),
      "64 KiB chunks per event": Number(r.chunksPerEvent.toFixed(4)),
      "entries per publish (of 10)": Number(r.batchFill.toFixed(1)),
      "$ per million events": Number(r.usdPerMillion.toFixed(2)),
      "of which the stream": Number(r.streamUsdPerMillion.toFixed(3)),
    })),
  );
  console.log(
    `the stream adds $${streamed.streamUsdPerMillion.toFixed(3)} per million events with one subscriber (target ≤ $0.10; SNS bills per 64 KiB chunk of a publish, delivery to SQS is free, so more subscribers cost the same), $${one.streamUsdPerMillion.toFixed(3)} with none`,
  );
}
