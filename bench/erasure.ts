/**
 * `npm run bench:erasure`: what one `webhook forget` reads, rewrites and costs (#34).
 *
 * A simulated day of BENCH_APPS apps (Zipf-like weights; BENCH_EVENTS events, receipt order,
 * batches of 100 as the projector archives them, projected into the tables) is archived on fauxqs
 * and DynamoDB Local; the most active user of the busiest app is then erased with the local
 * engine (DuckDB over the NDJSON with "$path"). Printed: the objects the search read (the bytes
 * Athena would scan) and the objects the erasure read, rewrote and left, the S3 and DynamoDB
 * requests, next to the baseline measured in the same run: reading and rewriting every object of
 * the day (what an erasure without a search does). Then priced for Athena and S3 at 1M events a
 * day, for one day and for 30 days of the same user (the day's figures scaled by 1M / events).
 */
import { createHash } from "node:crypto";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { documentClient } from "../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../shared/adapters/s3-blob-store";
import { listObjects } from "../shared/adapters/s3-listing";
import { duckDbEngine } from "../shared/analytics/engines/duckdb-sql-engine";
import { dynamoActivityStore } from "../shared/analytics/store/dynamo-activity-store";
import { forget, SEARCH_CHUNK_BYTES } from "../shared/erasure/forget";
import { UNVERSIONED } from "../shared/erasure/object-versions";
import { S3_PREFIX } from "../shared/platform/constants";
import { projectBatch } from "../shared/projector/core";
import type { QueuedEvent } from "../shared/projector/queued-event";
import { archiveBatch } from "../shared/projector/raw-archive";
import { projectionStores } from "../shared/projector/stores";
import { emulatorClients } from "../tools/local/clients";
import { startDynamoDbLocal } from "../tools/local/emulators";
import { createActivityTable, createProjectionTables, localTableNames } from "../tools/local/provision";
import { generateHistory, zipfWeights } from "../tools/simulate/generator";
import { countingProxy } from "./pipeline-cost/counting-proxy";
import { startFauxqsProcess } from "./support";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const APPS = Number(process.env.BENCH_APPS ?? 100);
const PER_DAY = 1_000_000;
const DAY_START = Date.UTC(2026, 2, 2);
/** Prices (us-east-1): Athena per TB scanned (10 MB minimum a query), S3 Standard requests, DynamoDB on demand. */
const PRICE = {
  athenaPerByte: 5 / 1024 ** 4,
  athenaMinimumBytes: 10 * 1024 ** 2,
  s3Get: 0.0004 / 1000,
  s3Put: 0.005 / 1000,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
};

/** S3 requests by price class from the proxy's counts (PUT, POST, LIST, DELETE as PUTs: DELETE is free, counted apart). */
function s3Requests(counts: Map<string, number>) {
  const n = (op: string) => counts.get(op) ?? 0;
  return {
    get: n("s3:GET") + n("s3:HEAD"),
    put: n("s3:PUT") + n("s3:POST"),
    list: n("s3:List"),
    delete: n("s3:DELETE"),
  };
}

async function main() {
  const [dynamoLocal, fauxqs] = await Promise.all([startDynamoDbLocal(), startFauxqsProcess()]);
  const s3Proxy = await countingProxy(fauxqs.endpoint);
  const direct = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
  const counted = emulatorClients({ aws: s3Proxy.endpoint, dynamodb: dynamoLocal.endpoint });
  try {
    const bucket = "erasure";
    await direct.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const tables = localTableNames("erasure");
    await createProjectionTables(direct.dynamo, tables);
    const activityTable = "erasure-activity";
    await createActivityTable(direct.dynamo, activityTable);

    // A day of every app, archived and projected in batches of 100.
    const apps = Array.from({ length: APPS }, (_, i) => `app-${i + 1}`);
    const history = generateHistory({
      events: EVENTS,
      seed: 5,
      apps,
      appWeights: zipfWeights(APPS),
      startAt: DAY_START / 1000,
    });
    const deliveries: QueuedEvent[] = history.events.map((e, i) => {
      const eventId = createHash("sha256").update(e.body).digest("hex");
      return {
        messageId: eventId,
        eventId,
        receivedAt: e.at + 500 + i,
        trigger: e.trigger,
        appId: e.appId,
        body: e.body,
      };
    });
    const store = s3BlobStore(direct.s3, bucket);
    const projector = {
      stores: projectionStores(direct.dynamo, tables),
      dataStore: store,
      recordingJobs: { send: async () => {}, sendBatch: async () => {} },
      now: () => DAY_START,
    } as unknown as Parameters<typeof projectBatch>[1];
    for (let i = 0; i < deliveries.length; i += 100) {
      const batch = deliveries.slice(i, i + 100);
      await archiveBatch(batch, store);
      await projectBatch(batch, projector);
    }
    const objects = await listObjects(direct.s3, bucket, "");
    const archive = objects.filter(
      (o) => o.key.startsWith(S3_PREFIX.raw) || o.key.startsWith(S3_PREFIX.edge),
    );
    const archiveBytes = archive.reduce((sum, o) => sum + o.size, 0);

    // The user: the busiest app's most active user.
    const busiest = apps[0] ?? "";
    const mentions = new Map<string, number>();
    for (const e of history.events)
      if (e.appId === busiest)
        for (const m of new Set(e.body.match(new RegExp(`${busiest}-u\\d+`, "g")) ?? []))
          mentions.set(m, (mentions.get(m) ?? 0) + 1);
    const [uid, userEvents] = [...mentions].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];

    // Baseline: without a search, every object of the day is read and written back.
    s3Proxy.counts.clear();
    const baselineStarted = performance.now();
    for (const { key } of archive) {
      const out = await counted.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const body = await out.Body?.transformToByteArray();
      await counted.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    }
    const baselineMs = performance.now() - baselineStarted;
    const baseline = s3Requests(s3Proxy.counts);

    // The erasure: the search reads through its own client (Athena's reads are its own bill).
    s3Proxy.counts.clear();
    const doc = documentClient(counted.dynamo);
    const started = performance.now();
    const report = await forget(
      {
        s3: counted.s3,
        bucket,
        search: duckDbEngine({ s3: direct.s3, bucket, objectPaths: true }),
        versions: UNVERSIONED,
        doc,
        tables,
        state: { doc, tableName: activityTable },
        rollup: {
          engine: duckDbEngine({ s3: direct.s3, bucket }),
          store: dynamoActivityStore(doc, activityTable),
          now: () => DAY_START + 10 * 86_400_000,
          graceMs: 7_200_000,
        },
        now: () => DAY_START + 10 * 86_400_000,
      },
      { appId: busiest, uid, requestedBy: "bench" },
    );
    const erasureMs = performance.now() - started;
    const erasure = s3Requests(s3Proxy.counts);
    const c = report.counts;

    const scale = PER_DAY / EVENTS;
    const batchesPerDay = PER_DAY / 100;
    const price = (days: number) => {
      const scanned = report.plan.bytesScanned * scale * days;
      // One search query per 4 GB of archive and needle round (uid, then the names learnt), at least 10 MB each.
      const queries = Math.max(1, Math.ceil(scanned / SEARCH_CHUNK_BYTES)) * 2;
      const athena = Math.max(scanned, queries * PRICE.athenaMinimumBytes) * PRICE.athenaPerByte;
      // The objects holding the user grow with their events, up to every batch of the day.
      const rewritten = Math.min(c.objectsRewritten * scale, batchesPerDay) * days;
      // Read once to plan and once to rewrite, written once, its old versions listed and deleted.
      const s3 = rewritten * 2 * PRICE.s3Get + rewritten * 3 * PRICE.s3Put;
      // The days recomputed and recompacted: a rollup query and a CTAS over each day's archive.
      const recompute = days * 2 * archiveBytes * scale * PRICE.athenaPerByte;
      return { scanned, athena, rewritten, s3, recompute, total: athena + s3 + recompute };
    };
    const one = price(1);
    const month = price(30);
    const mb = (b: number) => (b / 1024 ** 2).toFixed(1);

    console.log(
      `A day of ${EVENTS} events across ${APPS} apps: ${archive.length} archive objects, ${mb(archiveBytes)} MB (gzip NDJSON). Erased: the busiest app's most active user (${userEvents} events naming them, ${((100 * userEvents) / EVENTS).toFixed(2)}% of all: the worst case; the objects rewritten scale with the user's events).`,
    );
    console.table([
      {
        run: "baseline: read and rewrite every object",
        "objects read": archive.length,
        "objects rewritten": archive.length,
        "bytes scanned": 0,
        "S3 GET": baseline.get,
        "S3 PUT/LIST": baseline.put + baseline.list,
        seconds: Number((baselineMs / 1000).toFixed(1)),
      },
      {
        run: "forget (search by SQL)",
        "objects read": report.plan.objects.length,
        "objects rewritten": c.objectsRewritten,
        "bytes scanned": report.plan.bytesScanned,
        "S3 GET": erasure.get,
        "S3 PUT/LIST": erasure.put + erasure.list,
        seconds: Number((erasureMs / 1000).toFixed(1)),
      },
    ]);
    console.log(
      `forget: ${c.linesRedacted} lines redacted in ${c.objectsRewritten} objects (${((100 * c.objectsRewritten) / archive.length).toFixed(1)}% of the day's), ${c.itemsDeleted} items deleted, ${c.itemsRedacted} redacted, ${c.daysRecomputed} days recomputed`,
    );
    console.table(
      [
        ["1 day at 1M events", one],
        ["30 days at 1M events a day", month],
      ].map(([label, p]) => {
        const x = p as typeof one;
        return {
          erasure: label,
          "GB scanned (Athena)": Number((x.scanned / 1024 ** 3).toFixed(2)),
          "Athena search $": Number(x.athena.toFixed(4)),
          "objects rewritten": Math.round(x.rewritten),
          "S3 requests $": Number(x.s3.toFixed(4)),
          "recompute and recompact $": Number(x.recompute.toFixed(4)),
          "total $": Number(x.total.toFixed(4)),
        };
      }),
    );
    console.log(
      "Prices: Athena $5 per TB scanned (10 MB minimum a query), S3 GET $0.0004 and PUT/LIST/POST $0.005 per 1,000; DynamoDB: the user's items are a few writes, and the filtered Scans of the groups and memberships tables read them whole (half a read unit per 4 KB: ~$0.05 at 3.5 GB, docs/personal-data.md). Without compaction the search scans the NDJSON; its bytes grow with the archive's retention, not with the user.",
    );
  } finally {
    direct.destroy();
    counted.destroy();
    await s3Proxy.close();
    await Promise.all([dynamoLocal.stop(), fauxqs.stop()]);
  }
}

await main();
