/**
 * npm run bench:projector — the projector on the simulator's mix (one app, duplicates and
 * reordering), through the real batch handler against DynamoDB Local and fauxqs. Prints, each next
 * to its baseline from the same run:
 *   1. DynamoDB write request units per delivery (ReturnConsumedCapacity, index copies included),
 *      folded at batch 10 and 100, vs a one-write-per-touched-item baseline;
 *   2. throughput with a fixed 8 ms latency injected on every DynamoDB and S3 call (SDK
 *      middleware): the folded projector vs the one-by-one path (each event alone, in order);
 *   3. for one app at 5,000 events/s, the highest write rate on any single partition-key value of
 *      a table or index, vs the previous layout (indexes projecting ALL, keyed by the app alone).
 */
import { performance } from "node:perf_hooks";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { SQSRecord } from "aws-lambda";
import { s3BlobStore } from "../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../shared/adapters/sqs-message-queue";
import { parseWebhookEvent } from "../shared/events/schemas";
import { TABLE_DEFINITIONS } from "../shared/platform/tables";
import { groupsProjection } from "../shared/projections/groups";
import { membershipsProjection } from "../shared/projections/memberships";
import { presenceProjection } from "../shared/projections/presence";
import { sessionsProjection } from "../shared/projections/sessions";
import { projectSqsBatch } from "../shared/projector/batch";
import { type ProjectorDependencies, projectBatch, projectionInput } from "../shared/projector/core";
import { decodeRecord } from "../shared/projector/queued-event";
import { archiveBatch } from "../shared/projector/raw-archive";
import { projectionStores } from "../shared/projector/stores";
import { emulatorClients } from "../tools/local/clients";
import { startDynamoDbLocal } from "../tools/local/emulators";
import { createProjectionTables, localTableNames } from "../tools/local/provision";
import { ingestRecordFor } from "../tools/local/sqs-event";
import { deliveryPlan, generateHistory } from "../tools/simulate/generator";
import { startFauxqsProcess } from "./support";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 3000);
const THROUGHPUT_EVENTS = Number(process.env.BENCH_THROUGHPUT_EVENTS ?? 1000);
const LATENCY_MS = 8;
const APP_RATE = 5000;
const silent = () => ({
  logger: new Logger({ serviceName: "bench", logLevel: "SILENT" }),
  metrics: new Metrics({ namespace: "Bench", serviceName: "bench" }),
});

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

function mix() {
  const history = generateHistory({ events: EVENTS, seed: 7, apps: ["bench-app"] });
  return deliveryPlan(history.events, { seed: 7, duplicateShare: 0.05, reorderShare: 0.1 }).map((e, i) => ({
    ...e,
    record: ingestRecordFor(e.body, e.at + 200 + i),
  }));
}

/** Every write to a partition-key value (tables and indexes), in units, and the old layout's. */
function hotKeyMeter(dynamo: DynamoDBClient) {
  const units = new Map<string, number>();
  const legacy = new Map<string, number>();
  const last = new Map<string, Record<string, unknown>>();
  // Item writes per table: how many, how many over 1 KB (two or more write units), their units.
  const sizes = new Map<string, { writes: number; overOneKb: number; units: number }>();
  const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n);
  const size = (item: Record<string, unknown> | undefined) =>
    item ? Math.ceil(JSON.stringify(item).length / 1024) : 0;
  // The previous layout: online keyed by appId while online, byTime by appId, withRecording by appId; ALL attributes.
  const legacyIndexes: Record<string, Array<(i: Record<string, unknown>) => string | undefined>> = {
    Presence: [(i) => (i.status === "online" ? String(i.appId) : undefined)],
    Sessions: [(i) => String(i.appId), (i) => (i.recordingShard ? String(i.appId) : undefined)],
  };
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName !== "PutItemCommand") return result;
      const input = args.input as { TableName: string; Item: Record<string, never> };
      const item = unmarshall(input.Item);
      const definition = TABLE_DEFINITIONS.find((d) => input.TableName.endsWith(d.id.toLowerCase()));
      if (!definition) return result;
      const id = `${input.TableName}|${item[definition.partitionKey.name]}|${definition.sortKey ? item[definition.sortKey.name] : ""}`;
      const old = last.get(id);
      last.set(id, item);

      const capacity = (
        result.output as {
          ConsumedCapacity?: {
            Table?: { CapacityUnits?: number };
            GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
          };
        }
      ).ConsumedCapacity;
      const tableUnits = capacity?.Table?.CapacityUnits ?? size(item);
      add(units, `${definition.id} ${item[definition.partitionKey.name]}`, tableUnits);
      const seen = sizes.get(definition.id) ?? { writes: 0, overOneKb: 0, units: 0 };
      sizes.set(definition.id, {
        writes: seen.writes + 1,
        overOneKb: seen.overOneKb + (tableUnits > 1 ? 1 : 0),
        units: seen.units + tableUnits,
      });
      for (const index of definition.indexes) {
        const n = capacity?.GlobalSecondaryIndexes?.[index.name]?.CapacityUnits ?? 0;
        const key = item[index.partitionKey.name];
        const oldKey = old?.[index.partitionKey.name];
        // A key change is two index writes (the old entry deleted, the new one put), reported as
        // one figure: half to each key. An entry removed from a sparse index is one write, all of
        // it on the old key (it was counted as half a unit, understating the `online` index).
        if (n > 0 && oldKey !== undefined && key !== undefined && oldKey !== key) {
          add(units, `${definition.id}.${index.name} ${oldKey}`, n / 2);
          add(units, `${definition.id}.${index.name} ${key}`, n / 2);
        } else if (n > 0) add(units, `${definition.id}.${index.name} ${key ?? oldKey}`, n);
      }
      (legacyIndexes[definition.id] ?? []).forEach((keyOf, n) => {
        const [was, is] = [old ? keyOf(old) : undefined, keyOf(item)];
        if (was !== undefined || is !== undefined)
          add(legacy, `${definition.id}.legacy${n} ${is ?? was}`, size(item));
      });
      return result;
    },
    // After the DocumentClient marshalled the item (it does so at initialize).
    { step: "build", name: "hotKeyMeter" },
  );
  const hottest = (map: Map<string, number>, events: number) => {
    const [key, n] = [...map].sort((a, b) => b[1] - a[1])[0] ?? ["-", 0];
    return { key, perSecond: (n * APP_RATE) / events };
  };
  const byTable = () => {
    const totals: Record<string, number> = {};
    for (const [key, n] of units) {
      const table = key.split(" ")[0] ?? key;
      totals[table] = (totals[table] ?? 0) + n;
    }
    return totals;
  };
  return {
    hottest: (events: number) => ({ now: hottest(units, events), legacy: hottest(legacy, events) }),
    byTable,
    sizes: () => Object.fromEntries(sizes),
    writes: () => last.size,
  };
}

function injectLatency(client: DynamoDBClient | S3Client) {
  (client.middlewareStack as DynamoDBClient["middlewareStack"]).add(
    (next) => async (args) => {
      await new Promise((r) => setTimeout(r, LATENCY_MS));
      return next(args);
    },
    { step: "initialize", name: "latency" },
  );
}

async function main() {
  const [dynamoLocal, fauxqs] = await Promise.all([startDynamoDbLocal(), startFauxqsProcess()]);
  const clients = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
  const { s3, sqs } = clients;
  try {
    await s3.send(new CreateBucketCommand({ Bucket: "bench" }));
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "bench-recordings" }));
    const deliveries = mix();
    const naive = deliveries.reduce((n, e) => n + touchedItems(e.body), 0);

    // 1. Write units per delivery, folded at two batch sizes (and the hottest key at batch 100).
    const rows: Array<Record<string, string | number>> = [];
    let hot: ReturnType<ReturnType<typeof hotKeyMeter>["hottest"]> | undefined;
    for (const batch of [10, 100]) {
      const dynamo = emulatorClients({ dynamodb: dynamoLocal.endpoint }).dynamo;
      const meter = hotKeyMeter(dynamo);
      const names = localTableNames(`bench-${batch}`);
      await createProjectionTables(dynamo, names);
      const capacity = { writeUnits: 0, readUnits: 0 };
      const deps: ProjectorDependencies = {
        stores: projectionStores(dynamo, names, {
          onCapacity: (u) => {
            capacity.writeUnits += u.writeUnits;
            capacity.readUnits += u.readUnits;
          },
        }),
        dataStore: s3BlobStore(s3, "bench"),
        recordingJobs: sqsMessageQueue(sqs, QueueUrl ?? ""),
        now: Date.now,
      };
      for (let i = 0; i < deliveries.length; i += batch)
        await projectSqsBatch(
          { Records: deliveries.slice(i, i + batch).map((e) => e.record) },
          undefined,
          deps,
          silent(),
          capacity,
        );
      rows.push({
        projector: `folded, batch ${batch}`,
        "write units": capacity.writeUnits,
        "write units / delivery": (capacity.writeUnits / deliveries.length).toFixed(3),
        "read units / delivery": (capacity.readUnits / deliveries.length).toFixed(3),
      });
      if (batch === 100) {
        hot = meter.hottest(deliveries.length);
        console.log("write units by table and index (batch 100):", meter.byTable());
        console.log("item writes by table (batch 100; overOneKb: writes of 2+ units):", meter.sizes());
      }
      dynamo.destroy();
    }
    rows.push({
      projector: "baseline: one write request per touched item (requests, not units)",
      "write units": naive,
      "write units / delivery": (naive / deliveries.length).toFixed(3),
      "read units / delivery": "-",
    });
    console.log(
      `projector on the simulator's mix: ${deliveries.length} deliveries of one app (5% duplicated, 10% reordered)`,
    );
    console.table(rows);

    // 2. Throughput with 8 ms on every DynamoDB and S3 call, batches of 100.
    const slow = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
    injectLatency(slow.dynamo);
    injectLatency(slow.s3);
    const sample = deliveries.slice(0, THROUGHPUT_EVENTS);
    const run = async (label: string, oneByOne: boolean) => {
      const names = localTableNames(`bench-t-${label}`);
      await createProjectionTables(clients.dynamo, names);
      const deps: ProjectorDependencies = {
        stores: projectionStores(slow.dynamo, names),
        dataStore: s3BlobStore(slow.s3, "bench"),
        recordingJobs: sqsMessageQueue(sqs, QueueUrl ?? ""),
        now: Date.now,
      };
      const started = performance.now();
      for (let i = 0; i < sample.length; i += 100) {
        const records: SQSRecord[] = sample.slice(i, i + 100).map((e) => e.record);
        if (!oneByOne) {
          await projectSqsBatch({ Records: records }, undefined, deps, silent());
          continue;
        }
        // The one-by-one path: the same decode and archive, then each event alone, in order.
        const events = await Promise.all(records.map((r) => decodeRecord(r, deps.dataStore)));
        await archiveBatch(events, deps.dataStore);
        for (const event of events) await projectBatch([event], deps);
      }
      return sample.length / ((performance.now() - started) / 1000);
    };
    const folded = await run("folded", false);
    const oneByOne = await run("one", true);
    console.log(
      `projector throughput: folded ${folded.toFixed(0)} events/s, one-by-one ${oneByOne.toFixed(0)} events/s, ratio ${(folded / oneByOne).toFixed(1)} (batch 100, ${LATENCY_MS} ms per DynamoDB and S3 call)`,
    );
    slow.destroy();

    // 3. The hottest partition-key value at 5,000 events/s of one app.
    if (hot)
      console.log(
        `hottest partition-key value at ${APP_RATE} events/s of one app: ${hot.now.perSecond.toFixed(0)} write units/s (${hot.now.key}); previous layout: ${hot.legacy.perSecond.toFixed(0)} write units/s (${hot.legacy.key}); DynamoDB serves ~1000 per value`,
      );
  } finally {
    clients.destroy();
    await Promise.all([dynamoLocal.stop(), fauxqs.stop()]);
  }
}

await main();
