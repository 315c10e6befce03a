/**
 * `npm run bench:activity`: what the activity rollups scan and cost.
 *
 * A simulated day of one app (from 10 minutes before midnight to past the next one) is delivered
 * as the platform would (received 0.5 s after the event; 5% delivered again 10 or 40 s later, as a
 * platform retry; 1% received 1 to 120 minutes late) and archived as the projector archives it
 * (batches of 100 in receipt order, gzip NDJSON, raw objects and, for the batches that need them,
 * edge objects). The day is then recomputed with the rollup's query on DuckDB from its raw archive
 * and edge, and, as a check, from the receipt days D-1, D and D+1 (`--neighbours`): the figures
 * must be the same. Prints the bytes a recompute scans (today: the day so far; a closed day) next
 * to the day's raw JSON and to the previous read of D-1, D and D+1, and what the rollups add per million
 * events at 1M events a day on the default schedule (every 15 minutes, today and yesterday until
 * final, 120 minutes of grace), next to the pipeline's own price without them.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { COMPACT_ROW_GROUP_ROWS } from "../shared/analytics/compaction";
import { bindNamed, compactionSelect, DUCKDB_MACROS, duckDbArchiveViews } from "../shared/analytics/dialect";
import type { DayRange, SqlEngine } from "../shared/analytics/engines/sql-engine";
import { type DaySets, TOP_LIMIT } from "../shared/analytics/figures";
import { dayActivities, dayActivity, dayStart } from "../shared/analytics/rollup";
import { encodeConversations, encodeMembers, encodeUsers } from "../shared/analytics/user-sets";
import { dayOfKey, utcDay } from "../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../shared/platform/constants";
import type { BlobStore } from "../shared/ports/blob-store";
import type { QueuedEvent } from "../shared/projector/queued-event";
import { archiveBatch } from "../shared/projector/raw-archive";
import { generateHistory, zipfWeights } from "../tools/simulate/generator";
import { measure } from "./pipeline-cost/run";
import { startBench } from "./pipeline-cost/start";

/** ~1 event a second: enough to cover the day and 10 minutes on either side. */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 86_000);
const DAY = "2026-03-02";
const DAY_MS = 86_400_000;
/** The apps of the multi-tenant day (Zipf-like weights). */
const APPS = Number(process.env.BENCH_APPS ?? 1000);
/** How the platform delivers (assumed): retries 10 and 40 s after the first delivery, some events late. */
const DELIVERY = { retryShare: 0.05, lateShare: 0.01, maxLateMinutes: 120 };

/** Prices (us-east-1): Athena per TB scanned (10 MB minimum a query), Lambda arm64, DynamoDB on demand. */
const PRICE = {
  athenaPerByte: 5 / 1024 ** 4,
  athenaMinimumBytes: 10 * 1024 ** 2,
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  s3Request: 0.005 / 1000,
  s3GetRequest: 0.0004 / 1000,
};
/** The schedule's defaults (infra/config.ts) and the assumptions of the model. */
const SCHEDULE = { everyMinutes: 15, graceMinutes: 120, rollupMemoryGb: 0.25, secondsPerQuery: 10 };
/**
 * The pipeline without rollups, $ per million events: `bench:cost`'s one-app run (its mix of 3,000
 * events, on demand at 100 events/s in the batches the event source forms), measured in this run.
 */
async function pipelinePerMillion(): Promise<number> {
  const bench = await startBench();
  try {
    return (await measure(bench, 1, { events: 3000, print: false })).usdPerMillion;
  } finally {
    await bench.stop();
  }
}

/** A number in [0, 1) from a string: the same deliveries on every run. */
const unit = (text: string) => createHash("sha256").update(text).digest().readUInt32BE(0) / 2 ** 32;

/** Every object the archive got: its path, table, day, size and when its batch was archived. */
type Written = { path: string; table: "raw" | "edge"; day: string; bytes: number; at: number };

/**
 * The simulated day of `apps` (Zipf-like weights when several) delivered as the platform would and
 * archived in batches of 100 under `dir`, as the projector archives them.
 */
async function simulateDay(apps: string[], dir: string) {
  const start = dayStart(DAY);
  const history = generateHistory({
    events: EVENTS,
    seed: 7,
    apps,
    ...(apps.length > 1 ? { appWeights: zipfWeights(apps.length) } : {}),
    startAt: (start - 600_000) / 1000,
  });
  const deliveries: QueuedEvent[] = [];
  for (const e of history.events) {
    const eventId = createHash("sha256").update(e.body).digest("hex");
    const late = unit(`late ${eventId}`) < DELIVERY.lateShare;
    const receivedAt =
      e.at + 500 + (late ? Math.ceil(unit(`by ${eventId}`) * DELIVERY.maxLateMinutes * 60_000) : 0);
    const delivery = {
      messageId: eventId,
      eventId,
      receivedAt,
      trigger: e.trigger,
      appId: e.appId,
      body: e.body,
    };
    deliveries.push(delivery);
    if (unit(`retry ${eventId}`) < DELIVERY.retryShare)
      deliveries.push({
        ...delivery,
        messageId: `${eventId}-retry`,
        receivedAt: receivedAt + (unit(`when ${eventId}`) < 0.5 ? 10_000 : 40_000),
      });
  }
  deliveries.sort((a, b) => a.receivedAt - b.receivedAt);

  /** Every object written: its path, table, day, size and when its batch was archived. */
  const objects: Written[] = [];
  let batchAt = 0;
  const store: BlobStore = {
    bucket: "bench",
    async put(key, body) {
      const path = join(dir, key);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, body);
      const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
      const table = key.startsWith(S3_PREFIX.edge) ? "edge" : "raw";
      objects.push({ path, table, day: dayOfKey(key) ?? "", bytes, at: batchAt });
      return { bucket: "bench", key, size: bytes };
    },
    getText: async () => "",
    getBytes: async () => new Uint8Array(),
    getBytesIfPresent: async () => undefined,
  };
  let batches = 0;
  for (let i = 0; i < deliveries.length; i += 100) {
    const batch = deliveries.slice(i, i + 100);
    batchAt = Math.max(...batch.map((d) => d.receivedAt));
    await archiveBatch(batch, store);
    batches++;
  }
  return { history, deliveries, objects, batches };
}

/**
 * The rollup's engine over the files written (its scope picks the objects, as the local adapter's
 * does from the bucket); `until()` leaves out the batches archived later (today's last recompute).
 */
function engineOver(
  connection: DuckDBConnection,
  objects: readonly Written[],
  until: () => number = () => Number.POSITIVE_INFINITY,
): SqlEngine {
  return {
    name: "duckdb",
    async query(sql, params = {}, scope = {}) {
      const within = (day: string, range: DayRange) =>
        (!range.from || day >= range.from) && (!range.to || day <= range.to);
      const read = objects.filter(
        (o) =>
          o.at < until() &&
          (o.table === "raw" ? within(o.day, scope) : !!scope.edges && within(o.day, scope.edges)),
      );
      const paths = (table: "raw" | "edge") => read.filter((o) => o.table === table).map((o) => o.path);
      for (const view of duckDbArchiveViews({
        archive_events: { ndjson: paths("raw") },
        archive_edges: { ndjson: paths("edge") },
      }))
        await connection.run(view);
      const bound = bindNamed(sql, params);
      const rows = (await connection.runAndReadAll(bound.text, bound.values)).getRowObjectsJS();
      return {
        columns: [],
        rows: rows.map((r) =>
          Object.fromEntries(
            Object.entries(r).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : (v as never)]),
          ),
        ),
        bytesScanned: read.reduce((sum, o) => sum + o.bytes, 0),
      };
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), "bench-activity-"));
try {
  const start = dayStart(DAY);
  const { history, deliveries, objects, batches } = await simulateDay(["bench-app"], join(dir, "one"));
  if ((history.events.at(-1)?.at ?? 0) < start + DAY_MS)
    console.log(`note: ${EVENTS} events end before the day does (BENCH_EVENTS ≥ 86000 covers it)`);
  const dayEvents = history.events.filter((e) => utcDay(e.at) === DAY);
  const rawBytes = dayEvents.reduce((s, e) => s + Buffer.byteLength(e.body), 0);
  const sizeOf = (table: "raw" | "edge", day: string, before = Number.POSITIVE_INFINITY) =>
    objects
      .filter((o) => o.table === table && o.day === day && o.at < before)
      .reduce((s, o) => s + o.bytes, 0);
  const dayBytes = sizeOf("raw", DAY);
  const edgeBytes = sizeOf("edge", DAY);
  const edgePuts = objects.filter((o) => o.table === "edge").length;
  const rawPuts = objects.length - edgePuts;
  const perEventArchived =
    objects.filter((o) => o.table === "raw").reduce((s, o) => s + o.bytes, 0) / deliveries.length;

  // The recompute itself, as the rollup runs it (`dayActivity`), on DuckDB over the files written.
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  for (const macro of DUCKDB_MACROS) await connection.run(macro);
  let until = Number.POSITIVE_INFINITY;
  const engine = engineOver(connection, objects, () => until);
  const began = performance.now();
  const closed = await dayActivity(engine, "bench-app", DAY);
  const seconds = (performance.now() - began) / 1000;
  const activity = closed.activity;
  // The check: the previous read (D-1, D, D+1) gives the same figures.
  const same = isDeepStrictEqual(
    activity,
    (await dayActivity(engine, "bench-app", DAY, { neighbours: true })).activity,
  );
  until = start + DAY_MS;
  const today = await dayActivity(engine, "bench-app", DAY);

  // Today's last recompute reads D and the edge written so far; a closed day's, D and its whole
  // edge. The previous read of a closed day was D-1, D and D+1: at steady state, three days.
  const scannedToday = today.bytesScanned;
  const scannedClosed = closed.bytesScanned;
  const scannedBefore = 3 * dayBytes;
  const edgeShare = edgeBytes / dayBytes;

  // The model at 1M events a day.
  const million = 1e6;
  const dayBytesAtScale = perEventArchived * million;
  const runs = (24 * 60) / SCHEDULE.everyMinutes;
  const yesterdayRuns = Math.ceil(SCHEDULE.graceMinutes / SCHEDULE.everyMinutes);
  // Today's run reads D so far and its edge so far (at most the whole edge); yesterday's (until
  // final) D-1 and its whole edge.
  const todayScans =
    Array.from({ length: runs }, (_, k) => (k + 1) / runs).reduce((a, b) => a + b, 0) + runs * edgeShare;
  const yesterdayScans = yesterdayRuns * (1 + edgeShare);
  const queries = runs + yesterdayRuns;
  const athenaBytes = (todayScans + yesterdayScans) * dayBytesAtScale;
  const athena = Math.max(athenaBytes, queries * PRICE.athenaMinimumBytes) * PRICE.athenaPerByte;
  // The projector's one more PUT for each batch with lines another day needs.
  const edgePutsPerMillion = (edgePuts / deliveries.length) * million;
  const edgeWrites = edgePutsPerMillion * PRICE.s3Request;
  const lambda =
    queries * SCHEDULE.secondsPerQuery * SCHEDULE.rollupMemoryGb * PRICE.lambdaGbSecond +
    runs * PRICE.lambdaRequest;
  // A run's transaction: the day item, the hours that changed (≤ 2) and, at worst, every top-list
  // rank (2 × 25), each item's write units doubled by the transaction; one Query and one GetItem.
  const kb = (o: unknown) => Math.ceil(Buffer.byteLength(JSON.stringify(o)) / 1024);
  const dayItemUnits = kb({
    ...activity.figures,
    messageKinds: activity.messageKinds,
    computedAt: 0,
    final: false,
  });
  const hourUnits = kb(activity.hours[0]);
  const writeUnitsPerRun = 2 * (dayItemUnits + 2 * hourUnits + 2 * TOP_LIMIT);
  const dynamo = queries * (writeUnitsPerRun * PRICE.dynamoWriteUnit + 10 * PRICE.dynamoReadUnit);
  // Athena writes its results and the function lists the archive's apps: a few requests a query.
  const s3 = queries * 4 * PRICE.s3Request;
  const added = athena + lambda + dynamo + s3 + edgeWrites;

  const ratio = (bytes: number) => Number((bytes / rawBytes).toFixed(4));
  console.log(
    `simulated day ${DAY}: ${dayEvents.length} events (${EVENTS} generated, ${deliveries.length} deliveries with ${(DELIVERY.retryShare * 100).toFixed(0)}% retried and ${(DELIVERY.lateShare * 100).toFixed(0)}% late by ≤ ${DELIVERY.maxLateMinutes} min), recompute on DuckDB ${seconds.toFixed(2)} s`,
  );
  console.log(
    `  figures: ${activity.figures.messages} messages, ${activity.figures.active_users} active users, peak online ${activity.figures.peak_online}; from D-1, D and D+1 (--neighbours): ${same ? "the same" : "DIFFERENT"}`,
  );
  console.log(
    `  archive: ${rawPuts} raw objects, ${edgePuts} edge objects (${((edgePuts / batches) * 100).toFixed(2)}% of ${batches} batches put one more object)`,
  );
  console.table({
    "raw JSON of the day (bodies)": { bytes: rawBytes, "× raw JSON": 1 },
    "archive, receipt day D (gzip NDJSON)": { bytes: dayBytes, "× raw JSON": ratio(dayBytes) },
    "edge of D (lines of other receipt days D needs)": { bytes: edgeBytes, "× raw JSON": ratio(edgeBytes) },
    "scanned per recompute of today (D and its edge so far)": {
      bytes: scannedToday,
      "× raw JSON": ratio(scannedToday),
    },
    "scanned per recompute of a closed day (D and its edge)": {
      bytes: scannedClosed,
      "× raw JSON": ratio(scannedClosed),
    },
    "baseline: the previous read of a closed day (D-1, D, D+1 at steady state)": {
      bytes: scannedBefore,
      "× raw JSON": ratio(scannedBefore),
    },
  });
  console.log(
    `archive bytes per delivery: ${perEventArchived.toFixed(1)} (raw body ${(rawBytes / dayEvents.length).toFixed(1)})`,
  );
  const pipeline = await pipelinePerMillion();
  console.log(
    `\nAt 1M events a day, every ${SCHEDULE.everyMinutes} min (today; yesterday for ${SCHEDULE.graceMinutes} min of grace): ${queries} queries a day, ${(athenaBytes / 1024 ** 3).toFixed(2)} GiB scanned`,
  );
  console.table({
    "Athena (per TB scanned)": { "$ per 1M events": Number(athena.toFixed(4)) },
    [`rollup function (${SCHEDULE.secondsPerQuery} s a query, 256 MB)`]: {
      "$ per 1M events": Number(lambda.toFixed(4)),
    },
    [`DynamoDB (≤ ${writeUnitsPerRun} write units a run)`]: { "$ per 1M events": Number(dynamo.toFixed(4)) },
    "S3 requests (results, listing)": { "$ per 1M events": Number(s3.toFixed(4)) },
    [`edge object PUTs (${edgePutsPerMillion.toFixed(0)} per 1M events)`]: {
      "$ per 1M events": Number(edgeWrites.toFixed(4)),
    },
    "rollups, total": { "$ per 1M events": Number(added.toFixed(4)) },
    "the pipeline without them (bench:cost's one app, measured now)": {
      "$ per 1M events": Number(pipeline.toFixed(4)),
    },
    "the pipeline with them": { "$ per 1M events": Number((pipeline + added).toFixed(4)) },
  });
  console.log(
    `targets: scanned per day ≤ 0.3× raw JSON: ${ratio(scannedToday).toFixed(3)}× per recompute of today, ${ratio(scannedClosed).toFixed(3)}× per recompute of a closed day (baseline ${ratio(scannedBefore).toFixed(3)}×); rollups ≤ $0.10 per 1M events: $${added.toFixed(4)}`,
  );

  // ---- Multi-tenant: the same number of events over BENCH_APPS apps (Zipf-like weights). ----
  const tenants = await simulateDay(
    Array.from({ length: APPS }, (_, i) => `tenant-${String(i + 1).padStart(5, "0")}`),
    join(dir, "many"),
  );
  const tenantEngine = engineOver(connection, tenants.objects);
  const timed = async <T>(run: () => Promise<T>) => {
    const t0 = performance.now();
    const result = await run();
    return { result, seconds: (performance.now() - t0) / 1000 };
  };
  const allApps = await timed(() => dayActivities(tenantEngine, DAY));
  const shares = new Map<string, number>();
  const tenantDay = tenants.history.events.filter((e) => utcDay(e.at) === DAY);
  for (const e of tenantDay) shares.set(e.appId, (shares.get(e.appId) ?? 0) + 1 / tenantDay.length);
  // The app for the one-app figures: the biggest at most 5% of the day's events.
  const [probe, probeShare] = [...shares]
    .filter(([, share]) => share <= 0.05)
    .sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
  const oneOfMany = await timed(() => dayActivities(tenantEngine, DAY, { app: probe }));
  // A final pass: the same query with the day sets (users, conversations, the membership history).
  const finalPass = await timed(() => dayActivities(tenantEngine, DAY, { users: true }));
  const tenantRaw = tenants.objects.filter((o) => o.table === "raw" && o.day === DAY);
  const tenantDayBytes = tenantRaw.reduce((sum, o) => sum + o.bytes, 0);
  const sentApps = new Set(tenants.deliveries.map((d) => d.appId)).size;
  const tenantPuts = tenants.objects.length / tenants.deliveries.length;
  console.log(
    `\n${APPS} apps (${sentApps} sent; Zipf-like weights), the same ${EVENTS} events: ${tenants.objects.length} archive objects for ${tenants.batches} batches of 100 (${tenantPuts.toFixed(4)} PUTs a delivery; one app: ${(objects.length / deliveries.length).toFixed(4)})`,
  );
  console.log(
    `  every app's day in one query: ${allApps.seconds.toFixed(2)} s for ${allApps.result.activities.size} apps (one app's day alone: ${seconds.toFixed(2)} s; ${(allApps.seconds / seconds).toFixed(2)}× it, target ≤ 10×); one query narrowed to ${probe} (${(probeShare * 100).toFixed(2)}% of events): ${oneOfMany.seconds.toFixed(2)} s`,
  );

  // The day sets a final pass writes once a day: 4 objects, and each first-sightings kind reads
  // every earlier day's object (a year of them, modelled) to tell who is new: per 1M events a day.
  const setSizes = { users: 0, conversations: 0, members: 0 };
  for (const sets of finalPass.result.daySets?.values() ?? []) {
    setSizes.users += sets.users.length;
    setSizes.conversations += sets.conversations.length;
    setSizes.members += sets.members.length + sets.deletions.length;
  }
  const all = [...(finalPass.result.daySets ?? new Map<string, DaySets>())];
  const setBytes =
    encodeUsers(new Map(all.map(([app, sets]) => [app, sets.users]))).length +
    encodeConversations(new Map(all.map(([app, sets]) => [app, sets.conversations]))).length +
    encodeMembers(
      new Map(all.map(([app, sets]) => [app, { members: sets.members, deletions: sets.deletions }])),
    ).length;
  const setRequests = { puts: 4, lists: 2, gets: 2 * 365 };
  const setUsd =
    (setRequests.puts + setRequests.lists) * PRICE.s3Request + setRequests.gets * PRICE.s3GetRequest;
  console.log(
    `  a final pass (with the day sets): ${finalPass.seconds.toFixed(2)} s, next to ${allApps.seconds.toFixed(2)} s for the same query without them (${(finalPass.seconds / allApps.seconds).toFixed(2)}×; once a day); the same bytes scanned: ${finalPass.result.bytesScanned === allApps.result.bytesScanned ? "yes" : "NO"}`,
  );
  console.log(
    `  day sets: ${setSizes.users} active users, ${setSizes.conversations} conversations, ${setSizes.members} membership changes across ${finalPass.result.daySets?.size ?? 0} apps, ${setBytes} bytes of gzip NDJSON; S3 a day: ${setRequests.puts} PUTs, ${setRequests.lists} LISTs, ${setRequests.gets} GETs (a year of first sightings) = $${setUsd.toFixed(5)} per 1M events at 1M a day`,
  );

  // Closed day in Parquet: the tenants' day compacted as the compactor writes it, and the bytes a
  // one-app query reads: the row groups whose app range holds the app (min/max statistics), every
  // column of them, against the day's NDJSON.
  const parquetPath = join(dir, "day.parquet");
  const views = duckDbArchiveViews({
    archive_events: { ndjson: tenantRaw.map((o) => o.path) },
    archive_edges: { ndjson: [] },
  });
  for (const view of views) await connection.run(view);
  await connection.run(
    `COPY (${compactionSelect(DAY)}) TO '${parquetPath}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${COMPACT_ROW_GROUP_ROWS})`,
  );
  const groups = (
    await connection.runAndReadAll(
      `SELECT row_group_id, sum(total_compressed_size) AS bytes,
         max(CASE WHEN path_in_schema = 'app' THEN stats_min_value END) AS min_app,
         max(CASE WHEN path_in_schema = 'app' THEN stats_max_value END) AS max_app
       FROM parquet_metadata('${parquetPath}') GROUP BY row_group_id`,
    )
  ).getRowObjectsJS();
  const parquetBytes = groups.reduce((sum, g) => sum + Number(g.bytes), 0);
  const probeGroups = groups.filter((g) => String(g.min_app) <= probe && probe <= String(g.max_app));
  const probeBytes = probeGroups.reduce((sum, g) => sum + Number(g.bytes), 0);
  console.table({
    "the day's NDJSON (gzip), every app": { bytes: tenantDayBytes, "× NDJSON": 1 },
    "the day in Parquet (zstd, sorted by app, event time)": {
      bytes: parquetBytes,
      "× NDJSON": Number((parquetBytes / tenantDayBytes).toFixed(4)),
    },
    [`one app (${(probeShare * 100).toFixed(2)}% of events), NDJSON: the whole day`]: {
      bytes: tenantDayBytes,
      "× NDJSON": 1,
    },
    [`one app, Parquet: ${probeGroups.length} of ${groups.length} row groups`]: {
      bytes: probeBytes,
      "× NDJSON": Number((probeBytes / tenantDayBytes).toFixed(4)),
    },
  });

  // The scheduled cycle at 1, 1,000 and 10,000 apps, at 1M events a day: before, one query per app
  // and day; now, one per day for every app. Athena bills each query at least 10 MB.
  const todayBytes = (todayScans / runs) * dayBytesAtScale;
  const yesterdayBytes = (1 + edgeShare) * dayBytesAtScale;
  const cycle = (apps: number, perApp: boolean) => {
    const n = perApp ? apps : 1;
    const billed = (bytes: number) => n * Math.max(bytes / n, PRICE.athenaMinimumBytes);
    const today = billed(todayBytes) * PRICE.athenaPerByte;
    const yesterday = billed(yesterdayBytes) * PRICE.athenaPerByte;
    return {
      cycleQueries: 2 * n,
      scanned: billed(todayBytes) + billed(yesterdayBytes),
      usd: today + yesterday,
      month: 30 * (runs * today + yesterdayRuns * yesterday),
    };
  };
  console.log(
    `\nthe scheduled cycle (today, and yesterday until final) at 1M events a day; Athena bills ≥ 10 MB a query:`,
  );
  console.table(
    [1, 1000, 10_000].flatMap((apps) =>
      (
        [
          ["one query per app and day (before)", true],
          ["one query per day, every app (now)", false],
        ] as const
      ).map(([how, perApp]) => {
        const c = cycle(apps, perApp);
        return {
          apps,
          how,
          "engine queries": c.cycleQueries,
          "MB scanned (billed)": Number((c.scanned / 1024 ** 2).toFixed(1)),
          "$ a cycle": Number(c.usd.toFixed(5)),
          "Athena $ a month (every 15 min)": Number(c.month.toFixed(2)),
        };
      }),
    ),
  );
  // The function's time at 10,000 apps: 2 queries (~10 s each on Athena), reading the rows back
  // (~80 a day an app, 1,000 a results page, ~0.1 s a page), and the writes of the apps whose
  // figures moved (all of them, at worst: a Query and a transaction each, ~30 ms, 16 at a time).
  const modelSeconds =
    2 * SCHEDULE.secondsPerQuery + ((2 * 10_000 * 80) / 1000) * 0.1 + ((2 * 10_000) / 16) * 0.03;
  console.log(
    `the cycle at 10,000 apps, modelled: ${modelSeconds.toFixed(0)} s at worst (every app changed), inside the function's 600 s timeout`,
  );
  console.log(
    `targets: PUTs a delivery at ${APPS} apps ${tenantPuts.toFixed(4)} (≤ 0.02 at batches ≥ 50; these are of 100); cycle queries 2 whatever the apps; every app's day ${(allApps.seconds / seconds).toFixed(2)}× one app's (≤ 10×); one app of ≤ 5% on a closed day reads ${(probeBytes / tenantDayBytes).toFixed(4)}× the day's NDJSON in Parquet (≤ 0.1×)`,
  );
  connection.closeSync();
  instance.closeSync();
  if (!same) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
