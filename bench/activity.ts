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
 *
 * The whole bill (#59, `activity-bill.ts`): the objects and bytes every scheduled pass reads,
 * counted from the partitions it matches (`activity-reads.ts`) and checked against the GETs the
 * local engine makes through the counting proxy for a closed day's pass; the S3 GETs, LISTs,
 * result PUTs and access-log records of those reads, the function's GB-seconds, per million
 * events at 1M a day at the bench's batches and at those the event source forms at that rate,
 * beside the modelled direction (compacted as the day goes) and the goal; then the pipeline's
 * items measured in the same run (`bench:cost`'s one app) and the totals.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { DuckDBInstance } from "@duckdb/node-api";
import { readDeploymentConfig } from "../infra/config";
import { COMPACT_ROW_GROUP_ROWS } from "../shared/analytics/compaction";
import { compactionSelect, DUCKDB_MACROS, duckDbArchiveViews } from "../shared/analytics/dialect";
import { type DaySets, TOP_LIMIT } from "../shared/analytics/figures";
import { dayActivities, dayActivity, dayStart } from "../shared/analytics/rollup";
import { encodeConversations, encodeMembers, encodeUsers } from "../shared/analytics/user-sets";
import { utcDay } from "../shared/contracts/bucket-layout";
import type { QueuedEvent } from "../shared/projector/queued-event";
import { engineReadCheck, printBills, rollupBill } from "./activity-bill";
import { archiveDeliveries, DAY, DELIVERY, EVENTS, engineOver, simulateDay } from "./activity-day";
import type { Written } from "./activity-reads";
import { reportLine, writeDocBlock } from "./pipeline-cost/doc-block";
import { rollupMemory, SECONDS_PER_QUERY, scheduledQueriesADay } from "./pipeline-cost/fixed-month";
import { measure } from "./pipeline-cost/run";
import { startBench } from "./pipeline-cost/start";
import { batchAtRate, CONCURRENT_BATCHES } from "./support";

const DAY_MS = 86_400_000;
/** The apps of the multi-tenant day (Zipf-like weights). */
const APPS = Number(process.env.BENCH_APPS ?? 1000);

/** Prices (us-east-1): Athena per TB scanned (10 MB minimum a query), Lambda arm64, DynamoDB on demand. */
const PRICE = {
  athenaPerByte: 5 / 1024 ** 4,
  athenaMinimumBytes: 10 * 1024 ** 2,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  s3Request: 0.005 / 1000,
  s3GetRequest: 0.0004 / 1000,
};
/** The schedule's settings (infra/config.ts's defaults). */
const CONFIG = readDeploymentConfig({});
const SCHEDULE = { everyMinutes: CONFIG.activityEveryMinutes, graceMinutes: CONFIG.activityGraceMinutes };

/**
 * The whole bill at 1M events a day (#59): the local engine's reads of a closed day through the
 * counting proxy against the objects its partitions match; the rollups' items per million events
 * at the bench's batches of 100 and at the batches the event source forms at 1M a day (one batch
 * gathered at a time, and five), now and in the modelled direction; the pipeline's items measured
 * in this run (`bench:cost`'s one app); the goal of #59 against each. False if the engine's reads
 * differ from the count.
 */
async function printWholeBill(day: {
  objects: Written[];
  deliveries: QueuedEvent[];
  writeUnitsPerRun: number;
  parquetRatio: number;
}): Promise<boolean> {
  const bench = await startBench();
  try {
    const check = await engineReadCheck(bench, day.objects, DAY, "bench-app");
    const equal =
      check.engineGets === check.matchedGets &&
      check.engineBytes === check.matchedBytes &&
      !check.refusedGets;
    reportLine(
      `the engine's reads, counted: a closed day's pass on the local engine (DuckDB through the S3 API) behind the counting proxy made ${check.engineGets} GETs of archive objects (${check.engineBytes} bytes)${check.refusedGets ? ` and ${check.refusedGets} refused (404)` : ""}, and ${check.engineLists} LISTs (its raw, edge and compaction prefixes); the pass's partitions (raw and edge of ${DAY}) match ${check.matchedGets} objects (${check.matchedBytes} bytes): ${equal ? "equal" : "DIFFERENT"}. Deployed, Athena lists 24 hour prefixes and the edge's per pass.`,
    );
    const pipeline = await measure(bench, 1, { events: 3000, print: false });
    const rate = 1e6 / 86_400;
    const deployed = bench.deployed;
    const batchOf = (gatherers: number) =>
      batchAtRate(deployed.projectorBatchSize, deployed.projectorBatchingWindowSeconds, rate, gatherers);
    const received = day.deliveries.filter((d) => utcDay(d.receivedAt) === DAY).length;
    const queriesADay = scheduledQueriesADay(CONFIG);
    const dynamoPerMillion =
      queriesADay * (day.writeUnitsPerRun * PRICE.dynamoWriteUnit + 10 * PRICE.dynamoReadUnit);
    const sizes = [
      { name: "batches of 100 (this bench's archive)", batch: 100 },
      { name: `batches of ${batchOf(1)} (1M a day, one batch gathered at a time)`, batch: batchOf(1) },
      {
        name: `batches of ${batchOf(CONCURRENT_BATCHES)} (1M a day, ${CONCURRENT_BATCHES} gathered at once)`,
        batch: batchOf(CONCURRENT_BATCHES),
      },
    ];
    const bills = [];
    for (const size of sizes) {
      const objects =
        size.batch === 100
          ? day.objects
          : (await archiveDeliveries(day.deliveries, { batch: size.batch })).objects;
      bills.push({
        ...size,
        bill: rollupBill({
          objects,
          deliveries: received,
          day: DAY,
          schedule: SCHEDULE,
          rollupMemoryMb: rollupMemory(bench.synthesized),
          secondsPerQuery: SECONDS_PER_QUERY,
          accessLogDays: bench.template.accessLogDays,
          dynamoPerMillion,
          parquetRatio: day.parquetRatio,
        }),
      });
    }
    printBills(bills, pipeline.lines, queriesADay, {
      parquetRatio: day.parquetRatio,
      accessLogDays: bench.template.accessLogDays,
      infrequentAccessDays: CONFIG.archiveInfrequentAccessDays,
      glacierDays: CONFIG.archiveGlacierDays,
    });
    writeDocBlock("activity", "npm run bench:activity");
    return equal;
  } finally {
    await bench.stop();
  }
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

  // The cycle's model at 1M events a day (the table of apps below): today's run reads D so far and
  // its edge so far, yesterday's (until final) D-1 and its whole edge.
  const dayBytesAtScale = perEventArchived * 1e6;
  const runs = (24 * 60) / SCHEDULE.everyMinutes;
  const yesterdayRuns = Math.ceil(SCHEDULE.graceMinutes / SCHEDULE.everyMinutes);
  const todayScans =
    Array.from({ length: runs }, (_, k) => (k + 1) / runs).reduce((a, b) => a + b, 0) + runs * edgeShare;
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
  const modelSeconds = 2 * SECONDS_PER_QUERY + ((2 * 10_000 * 80) / 1000) * 0.1 + ((2 * 10_000) / 16) * 0.03;
  console.log(
    `the cycle at 10,000 apps, modelled: ${modelSeconds.toFixed(0)} s at worst (every app changed), inside the function's 600 s timeout`,
  );
  console.log(
    `targets: PUTs a delivery at ${APPS} apps ${tenantPuts.toFixed(4)} (≤ 0.02 at batches ≥ 50; these are of 100); cycle queries 2 whatever the apps; every app's day ${(allApps.seconds / seconds).toFixed(2)}× one app's (≤ 10×); one app of ≤ 5% on a closed day reads ${(probeBytes / tenantDayBytes).toFixed(4)}× the day's NDJSON in Parquet (≤ 0.1×)`,
  );
  connection.closeSync();
  instance.closeSync();
  if (
    !(await printWholeBill({
      objects,
      deliveries,
      writeUnitsPerRun,
      parquetRatio: parquetBytes / tenantDayBytes,
    }))
  )
    process.exitCode = 1;
  if (!same) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
