/**
 * The pipeline's price per event, measured: a run of the simulator's mix (`measure`) through the
 * real ingest and projector that `startBench` wired to the emulators, with the functions' log
 * bytes and units counted, priced by the model and printed by the report. `npm run bench:cost`
 * prints it (bench/cost.ts); `npm run bench:activity` measures the one-app figure in its own run,
 * next to what the rollups add.
 */
import { DeleteItemCommand } from "@aws-sdk/client-dynamodb";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { SystemLogLevel } from "aws-cdk-lib/aws-lambda";
import { INGEST_SYSTEM_LOG_LEVEL } from "../../infra/stack";
import { LISTENER_SWITCH_KEY, turnListenersOn } from "../../shared/stream/listener-switch";
import { emulatorClients } from "../../tools/local/clients";
import { LOCAL_REGION } from "../../tools/local/emulators";
import { webhookPostEvent } from "../../tools/local/http-gateway";
import { SqsPoller } from "../../tools/local/poller";
import { deliveryPlan, generateHistory, zipfWeights } from "../../tools/simulate/generator";
import {
  billedMs,
  costLines,
  countedBefore,
  EVENTS,
  platformShare,
  type RunCounts,
  sumPerMillion,
} from "./model";
import { printRun } from "./report";
import type { Bench } from "./start";
import { emfMetricKeys } from "./template";

/** Counts the bytes of the functions' log lines (JSON and EMF) written while `run` runs, and keeps them off the terminal. */
async function capturingLogs<T>(run: () => Promise<T>) {
  const bytes = { logs: 0, writeUnits: 0, readUnits: 0 };
  /** The custom metrics the lines emitted (EMF): CloudWatch bills each per hour it is emitted. */
  const metrics = new Set<string>();
  const tap = (stream: NodeJS.WriteStream) => {
    const original = stream.write.bind(stream);
    stream.write = ((chunk: string | Uint8Array) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      for (const line of text.split("\n")) {
        if (!line.startsWith("{")) continue;
        bytes.logs += Buffer.byteLength(line) + 1;
        const entry = JSON.parse(line) as { ProjectorWriteUnits?: number; ProjectorReadUnits?: number };
        for (const key of emfMetricKeys(entry)) metrics.add(key);
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
    return { result: await run(), ...bytes, metrics };
  } finally {
    for (const restore of restores) restore();
  }
}

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
async function deliverAndDrain(
  bench: Bench,
  plan: readonly { body: string; at: number }[],
  batch = bench.batch,
) {
  let projectorInvocations = 0;
  // Each handler's time per invocation, as Lambda bills it (rounded up to the ms): GB-seconds.
  const duration = { ingestMs: 0, projectorMs: 0 };
  const run = await capturingLogs(async () => {
    for (const [i, delivery] of plan.entries()) {
      const event = webhookPostEvent(delivery.body, delivery.at + 200 + i, {
        username: "bench",
        password: "bench-password",
      });
      const started = performance.now();
      const response = await bench.ingest(event);
      duration.ingestMs += billedMs(performance.now() - started);
      if (response.statusCode !== 200) throw new Error(`ingest answered ${response.statusCode}`);
    }
    const poller = new SqsPoller({
      sqs: emulatorClients({ aws: bench.aws.endpoint }).sqs,
      queueUrl: bench.eventsQueue.url,
      queueArn: bench.eventsQueue.arn,
      region: LOCAL_REGION,
      handler: async (e, c) => {
        projectorInvocations++;
        const started = performance.now();
        try {
          return await bench.projector(e, c);
        } finally {
          duration.projectorMs += billedMs(performance.now() - started);
        }
      },
      functionName: "projector",
      batchSize: batch,
      batchingWindowMs: bench.deployed.projectorBatchingWindowSeconds * 1000,
      concurrency: 1,
    });
    poller.start();
    await drained(bench);
    await poller.stop();
  });
  return { ...run, ...duration, projectorInvocations };
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
    // Every request to the bucket writes an access-log record, refused ones too (the emulator's own aside).
    s3Requests: [...bench.aws.counts]
      .filter(([op]) => op.startsWith("s3:") && !op.startsWith("s3:emulator-oversize"))
      .reduce((sum, [, n]) => sum + n, 0),
    ingestMs: run.ingestMs,
    projectorMs: run.projectorMs,
  };
}

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
  options: {
    events?: number;
    print?: boolean;
    stream?: boolean;
    /** Deliveries to send instead of the mix (in their order, each received at `at`): the hot group's. */
    plan?: ReadonlyArray<{ body: string; at: number }>;
    /** The projector's batch (the event source's), instead of the one the rate gives. */
    batch?: number;
  } = {},
) {
  await setStream(bench, options.stream ?? false);
  bench.aws.counts.clear();
  bench.dynamodb.counts.clear();
  bench.sizes.clear();
  for (const u of bench.meter.units.values()) Object.assign(u, { write: 0, read: 0 });
  // The stream's run is the same mix in an app of its own: its items are new, as the first run's were.
  const history = options.plan
    ? undefined
    : mixOver(appCount, options.events ?? EVENTS, options.stream ? "cost-stream-app" : undefined);
  const plan =
    options.plan ?? deliveryPlan(history?.events ?? [], { seed: 7, duplicateShare: 0.05, reorderShare: 0.1 });
  const run = await deliverAndDrain(bench, plan, options.batch);
  const counts = runCounts(bench, plan.length, run);
  const perInvocation = counts.projectorInvocations / counts.n;
  const lines = costLines(
    counts,
    platformShare(perInvocation, {
      systemLogLevel: INGEST_SYSTEM_LOG_LEVEL,
      traced: bench.deployed.ingestTracing,
    }),
    bench.template,
  );
  const previous = costLines(
    counts,
    platformShare(perInvocation, { systemLogLevel: SystemLogLevel.INFO, traced: true }),
    bench.template,
  );
  const apps = history ? new Set(history.events.map((e) => e.appId)).size : 1;
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
    /** Per table and index (`Groups`, `Memberships.byUser`, …), the write units DynamoDB reported, per delivery. */
    writeUnitsByResource: Object.fromEntries(
      [...bench.meter.units].map(([resource, u]) => [resource, u.write / counts.n]),
    ),
    itemSizes: bench.sizes.summary(),
    usdPerMillion: sumPerMillion(lines),
    usdCountedBefore: countedBefore(lines),
    lines,
    metrics: run.metrics,
  };
}
