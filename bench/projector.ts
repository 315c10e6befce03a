/**
 * npm run bench:projector — DynamoDB write requests per event on a realistic mix, through the
 * real projector batch handler against DynamoDB Local and fauxqs; next to the baseline of a
 * naive projector that writes every item an event touches (one UpdateItem each).
 */
import { performance } from "node:perf_hooks";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import { s3BlobStore } from "../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../shared/adapters/sqs-message-queue";
import { parseWebhookEvent } from "../shared/events/schemas";
import { groupsProjection } from "../shared/projections/groups";
import { membershipsProjection } from "../shared/projections/memberships";
import { presenceProjection } from "../shared/projections/presence";
import { sessionsProjection } from "../shared/projections/sessions";
import { projectSqsBatch } from "../shared/projector/batch";
import { projectionInput } from "../shared/projector/core";
import { projectionStores } from "../shared/projector/stores";
import { emulatorClients } from "../tools/local/clients";
import { startDynamoDbLocal } from "../tools/local/emulators";
import { createProjectionTables, localTableNames } from "../tools/local/provision";
import { ingestRecordFor } from "../tools/local/sqs-event";
import { deliveryPlan, generateHistory } from "../tools/simulate/generator";
import { startFauxqsProcess } from "./support";

/** How many items a naive projector would write for an event: one per item it touches. */
function touchedItems(body: string): number {
  const parsed = parseWebhookEvent(JSON.parse(body));
  if (parsed.kind !== "known") return 0;
  const input = projectionInput(parsed.event, "x", 0);
  return [groupsProjection, membershipsProjection, presenceProjection, sessionsProjection].reduce(
    (n, p) => n + (p.handles(parsed.event) ? p.keys(input as never).length : 0),
    0,
  );
}

const EVENTS = Number(process.env.BENCH_EVENTS ?? 3000);
const BATCH = 10;

async function main() {
  const [dynamoLocal, fauxqs] = await Promise.all([startDynamoDbLocal(), startFauxqsProcess()]);
  const { dynamo, s3, sqs } = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
  const writes = { count: 0 };
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (
        [
          "PutItemCommand",
          "UpdateItemCommand",
          "DeleteItemCommand",
          "BatchWriteItemCommand",
          "TransactWriteItemsCommand",
        ].includes(context.commandName ?? "")
      )
        writes.count++;
      return next(args);
    },
    { step: "initialize", name: "countWrites" },
  );
  try {
    const names = localTableNames("bench");
    await createProjectionTables(dynamo, names);
    await s3.send(new CreateBucketCommand({ Bucket: "bench" }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "bench-recordings" }));
    const deps = {
      stores: projectionStores(dynamo, names),
      dataStore: s3BlobStore(s3, "bench"),
      recordingJobs: sqsMessageQueue(sqs, QueueUrl ?? ""),
      now: Date.now,
    };
    const obs = {
      logger: new Logger({ serviceName: "bench", logLevel: "SILENT" }),
      metrics: new Metrics({ namespace: "Bench", serviceName: "bench" }),
    };
    const history = generateHistory({ events: EVENTS, seed: 7, apps: ["bench-app"] });
    const mix = deliveryPlan(history.events, { seed: 7, duplicateShare: 0.05, reorderShare: 0.1 }).map(
      (e, i) => ({
        ...e,
        receivedAt: e.at + 200 + i,
        touchedItems: touchedItems(e.body),
      }),
    );
    const outcomes = new Map<string, number>();
    let naiveWrites = 0;
    const started = performance.now();
    for (let i = 0; i < mix.length; i += BATCH) {
      const records = mix.slice(i, i + BATCH).map((e) => ingestRecordFor(e.body, e.receivedAt));
      await projectSqsBatch({ Records: records }, undefined, deps, obs);
      naiveWrites += mix.slice(i, i + BATCH).reduce((n, e) => n + e.touchedItems, 0);
    }
    const elapsed = (performance.now() - started) / 1000;
    for (const e of mix) outcomes.set(e.trigger, (outcomes.get(e.trigger) ?? 0) + 1);
    const projectedShare = mix.filter((e) => e.touchedItems > 0).length;
    console.log(
      `projector on a realistic mix: ${mix.length} deliveries (5% duplicated, 10% reordered), batches of ${BATCH}`,
    );
    console.table([
      {
        projector: "this (read-evolve-conditional write)",
        "DynamoDB writes": writes.count,
        "writes / delivery": (writes.count / mix.length).toFixed(3),
        "writes / event with a table": (writes.count / projectedShare).toFixed(3),
      },
      {
        projector: "baseline: one write per touched item",
        "DynamoDB writes": naiveWrites,
        "writes / delivery": (naiveWrites / mix.length).toFixed(3),
        "writes / event with a table": (naiveWrites / projectedShare).toFixed(3),
      },
    ]);
    console.log(
      `throughput: ${(mix.length / elapsed).toFixed(0)} deliveries/s on DynamoDB Local (not a target)`,
    );
    console.log("mix:", Object.fromEntries([...outcomes].sort((a, b) => b[1] - a[1])));
  } finally {
    dynamo.destroy();
    s3.destroy();
    sqs.destroy();
    await Promise.all([dynamoLocal.stop(), fauxqs.stop()]);
  }
}

await main();
