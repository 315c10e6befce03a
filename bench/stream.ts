/**
 * The stream of facts' figures for `npm run bench:projector` (#41):
 * - the projector's start-up bundle with and without a stream configured (the SNS client and the
 *   publish step are loaded by the first publish, not at cold start), and that first publish's
 *   import time next to the recording job's first SQS import, measured the same way;
 * - from acknowledgement to a subscriber's queue, p50 and p99, next to acknowledgement to the
 *   table in the same run: the real poller, projector and publisher on DynamoDB Local and fauxqs
 *   (fauxqs models no network latency: a local, relative figure).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { CreateTopicCommand } from "@aws-sdk/client-sns";
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from "@aws-sdk/client-sqs";
import { parseStreamMessage } from "@webhook-backend/stream";
import { bundleFunction, FUNCTION_ENTRIES } from "../infra/bundling";
import { s3BlobStore } from "../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../shared/adapters/sqs-message-queue";
import { eventMessageAttributes, messageGroupOf } from "../shared/contracts/queue-messages";
import { EVENTS_QUEUE } from "../shared/platform/queues";
import { projectSqsBatch } from "../shared/projector/batch";
import type { ProjectorDependencies } from "../shared/projector/core";
import type { FactStream } from "../shared/projector/fact-stream";
import { projectionStores } from "../shared/projector/stores";
import { projectorStream } from "../shared/stream/projector-stream";
import { snsStreamPublisher } from "../shared/stream/sns-publisher";
import { subscribeQueue } from "../shared/stream/subscriptions";
import type { Clients } from "../tools/local/clients";
import { LOCAL_REGION } from "../tools/local/emulators";
import { SqsPoller } from "../tools/local/poller";
import { createProjectionTables, localTableNames } from "../tools/local/provision";
import { queueDepth } from "../tools/ops/queues";
import { bundleAt, bundleKb, firstUseImportMs, PROBE_ENV } from "./bundles";
import { percentile } from "./support";

const IMPORT_RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 15);
const LATENCY_EVENTS = Number(process.env.BENCH_STREAM_EVENTS ?? 1000);
/** The rate the latency run sends at (events/s): a steady stream the batches form from. */
const LATENCY_RATE = Number(process.env.BENCH_STREAM_RATE ?? 200);

/** The projector's environment with the stream configured (nothing is called at import). */
const STREAM_ENV = {
  ...PROBE_ENV,
  POWERTOOLS_SERVICE_NAME: "projector",
  STREAM_TOPIC_ARN: "arn:aws:sns:us-east-1:000000000000:bench-stream",
  STREAM_UNPUBLISHED_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/000000000000/bench-unpublished",
  APPS_TABLE: "bench-apps",
};

/** The bundle's files whose names start with one of `prefixes` (chunks are named by their entry module). */
function filesOf(dir: string, prefixes: readonly string[]): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter(
    (f) => f.endsWith(".mjs") && prefixes.some((p) => f.startsWith(p)),
  );
}

/** The projector's bundle: its start-up code with and without the stream, and the first publish's import. */
export function printStreamBundle(): void {
  const outdir = mkdtempSync(join(tmpdir(), "bench-projector-bundle-"));
  try {
    // As the stack deploys it (source maps on, run with --enable-source-maps).
    bundleFunction(FUNCTION_ENTRIES.projector, outdir, { sourceMaps: true });
    const bundle = bundleAt(outdir);
    const without = bundleKb(bundle);
    const withStream = bundleKb(bundle, STREAM_ENV);
    const publish = filesOf(outdir, ["stream-publisher.lazy.mjs", "chunks/projector-stream-"]);
    const jobs = filesOf(outdir, ["chunks/sqs-client-", "chunks/sqs-message-queue-"]);
    const kb = (files: string[]) => files.reduce((sum, f) => sum + statSync(join(outdir, f)).size, 0) / 1024;
    console.log(
      `projector start-up bundle: ${without.startup.toFixed(1)} KB without a stream, ${withStream.startup.toFixed(1)} KB with one configured (the publish step and the SNS client are not in it: ${kb(publish).toFixed(1)} KB loaded by the first publish, ${publish.join(", ")})`,
    );
    const first = firstUseImportMs(bundle, publish, STREAM_ENV, IMPORT_RUNS);
    const baseline = firstUseImportMs(bundle, jobs, STREAM_ENV, IMPORT_RUNS);
    console.log(
      `first publish's import: ${first.toFixed(1)} ms; the first recording job's SQS client (${kb(jobs).toFixed(1)} KB), measured the same way: ${baseline.toFixed(1)} ms (wall clock after the handler's import in a fresh Node ${process.versions.node} process, median of ${IMPORT_RUNS}; budget ≤ 50 ms)`,
    );
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** A delivery of the mix to put on the events queue. */
interface MixDelivery {
  body: string;
}

/**
 * From acknowledgement to the table and to a subscriber's queue: the mix sent to an events queue at
 * LATENCY_RATE (each stamped with its send time: the ingest acknowledges once SQS has it), the
 * poller forming the deployed batches, the projector folding them and publishing to a topic with
 * one subscriber, whose queue a consumer long-polls. A record's tables are written when its
 * batch reaches the publish step; it reaches the subscriber when the consumer receives it.
 */
export async function printStreamLatency(
  clients: Clients,
  bucket: string,
  mix: readonly MixDelivery[],
): Promise<void> {
  const { sqs, sns, dynamo, s3 } = clients;
  const tables = localTableNames("bench-stream");
  await createProjectionTables(dynamo, tables);
  const topicArn = (await sns.send(new CreateTopicCommand({ Name: "bench-stream" }))).TopicArn ?? "";
  const subscriber = await subscribeQueue(sns, sqs, {
    topicArn,
    queueName: "bench-subscriber",
    rawDelivery: true,
  });
  const queue = async (name: string) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl ?? "";
  const eventsUrl = await queue("bench-stream-events");
  const unpublishedUrl = await queue("bench-stream-unpublished");
  const jobsUrl = await queue("bench-stream-jobs");
  const eventsArn =
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: eventsUrl, AttributeNames: ["QueueArn"] })))
      .Attributes?.QueueArn ?? "";
  const silent = (serviceName: string) => ({
    logger: new Logger({ serviceName, logLevel: "SILENT" }),
    metrics: new Metrics({ namespace: "Bench", serviceName }),
  });
  const dataStore = s3BlobStore(s3, bucket);
  const publish = projectorStream({
    publisher: snsStreamPublisher(sns, topicArn),
    unpublished: sqsMessageQueue(sqs, unpublishedUrl),
    dataStore,
    maxReceiveCount: EVENTS_QUEUE.maxReceiveCount,
    ...silent("stream"),
  });
  const tableAt = new Map<string, number>();
  const stream: FactStream = {
    async publishAccepted(records) {
      const now = Date.now();
      for (const r of records) tableAt.set(`${r.event.eventId}@${r.event.receivedAt}`, now);
      return publish.publishAccepted(records);
    },
  };
  const deps: ProjectorDependencies = {
    stores: projectionStores(dynamo, tables),
    dataStore,
    recordingJobs: sqsMessageQueue(sqs, jobsUrl),
    now: Date.now,
    stream,
  };
  const poller = new SqsPoller({
    sqs,
    queueUrl: eventsUrl,
    queueArn: eventsArn,
    region: LOCAL_REGION,
    handler: (event, context) => projectSqsBatch(event, context, deps, silent("projector")),
    functionName: "projector",
    batchSize: EVENTS_QUEUE.batchSize,
    batchingWindowMs: EVENTS_QUEUE.batchingWindowSeconds * 1000,
    concurrency: 2,
  });
  const receivedAt = new Map<string, number>();
  let consuming = true;
  const consumer = (async () => {
    while (consuming) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: subscriber.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      const now = Date.now();
      for (const m of out.Messages ?? []) {
        const id = parseStreamMessage(m.Body ?? "").id;
        if (!receivedAt.has(id)) receivedAt.set(id, now);
      }
      if (out.Messages?.length)
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: subscriber.queueUrl,
            Entries: out.Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
    }
  })();
  poller.start();
  const acked = new Map<string, number>();
  const sample = mix.slice(0, LATENCY_EVENTS);
  const started = Date.now();
  for (let i = 0; i < sample.length; i += 10) {
    // Paced: batch i leaves at started + i / rate.
    const due = started + (i / LATENCY_RATE) * 1000;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    const now = Date.now();
    const entries = sample.slice(i, i + 10).map((d, j) => {
      const { trigger, appId } = JSON.parse(d.body) as { trigger: string; appId: string };
      const eventId = `${String(i + j).padStart(8, "0")}${"0".repeat(56)}`;
      acked.set(`${eventId}@${now}`, now);
      const attributes = eventMessageAttributes({ trigger, appId, receivedAt: now, eventId });
      return {
        Id: String(j),
        MessageBody: d.body,
        MessageGroupId: messageGroupOf(appId),
        MessageAttributes: Object.fromEntries(
          Object.entries(attributes).map(([k, v]) => [
            k,
            typeof v === "number"
              ? { DataType: "Number", StringValue: String(v) }
              : { DataType: "String", StringValue: v },
          ]),
        ),
      };
    });
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: eventsUrl, Entries: entries }));
  }
  // Until the events queue is empty and every record that reached the publish step was received.
  const deadline = Date.now() + 120_000;
  const pending = async () =>
    (await queueDepth(sqs, eventsUrl)) > 0 || [...tableAt.keys()].some((id) => !receivedAt.has(id));
  while (Date.now() < deadline && (await pending())) await new Promise((r) => setTimeout(r, 200));
  await poller.stop();
  consuming = false;
  await consumer;
  const toTable: number[] = [];
  const toSubscriber: number[] = [];
  for (const [id, ack] of acked) {
    const table = tableAt.get(id);
    const subscribed = receivedAt.get(id);
    if (table !== undefined) toTable.push(table - ack);
    if (subscribed !== undefined) toSubscriber.push(subscribed - ack);
  }
  const ms = (xs: number[], p: number) => `${percentile(xs, p).toFixed(0)} ms`;
  console.log(
    `acknowledgement to the table: p50 ${ms(toTable, 50)}, p99 ${ms(toTable, 99)}; to the subscriber's queue: p50 ${ms(toSubscriber, 50)}, p99 ${ms(toSubscriber, 99)} (${toSubscriber.length} of ${toTable.length} accepted deliveries received; ${sample.length} sent at ${LATENCY_RATE}/s, batches of ${EVENTS_QUEUE.batchSize} within ${EVENTS_QUEUE.batchingWindowSeconds} s, local emulators: a relative figure)`,
  );
}
