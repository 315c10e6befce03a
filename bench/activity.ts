/**
 * `npm run bench:activity`: what the activity rollups scan and cost.
 *
 * A simulated day of one app is archived as the projector archives it (batches of 100, gzip
 * NDJSON, receipt 0.5 s after each event), then recomputed with the rollup's query on DuckDB.
 * Prints the bytes a recompute of one day scans (today: the day so far; a closed day: the receipt
 * days D-1, D and D+1, neighbours the size of the day) next to the day's raw JSON, and what the rollups add per
 * million events at 1M events a day on the default schedule (every 15 minutes, today and
 * yesterday until final, 120 minutes of grace), next to the pipeline's own price without them.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { bindNamed, DUCKDB_MACROS, duckDbArchiveView } from "../shared/analytics/dialect";
import { activityFromRows, TOP_LIMIT } from "../shared/analytics/figures";
import { readQuery } from "../shared/analytics/queries";
import { dayStart, partitionsOf } from "../shared/analytics/rollup";
import { utcDay } from "../shared/contracts/bucket-layout";
import type { BlobStore } from "../shared/ports/blob-store";
import { archiveBatch } from "../shared/projector/raw-archive";
import { generateHistory } from "../tools/simulate/generator";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 40_000);
const DAY = "2026-03-02";
const DAY_MS = 86_400_000;

/** Prices (us-east-1): Athena per TB scanned (10 MB minimum a query), Lambda arm64, DynamoDB on demand. */
const PRICE = {
  athenaPerByte: 5 / 1024 ** 4,
  athenaMinimumBytes: 10 * 1024 ** 2,
  lambdaGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  s3Request: 0.005 / 1000,
};
/** The schedule's defaults (infra/config.ts) and the assumptions of the model. */
const SCHEDULE = { everyMinutes: 15, graceMinutes: 120, rollupMemoryGb: 0.25, secondsPerQuery: 10 };
/** `npm run bench:cost`'s figure for the pipeline without rollups ($ per million events, README). */
const PIPELINE_PER_MILLION = 2.28;

const dir = mkdtempSync(join(tmpdir(), "bench-activity-"));
try {
  // A day of events: the generator's pace is ~1 event a second; the figures are per event.
  const history = generateHistory({
    events: EVENTS,
    seed: 7,
    apps: ["bench-app"],
    startAt: dayStart(DAY) / 1000,
  });
  const files: string[] = [];
  const sizes = new Map<string, number>();
  const store: BlobStore = {
    bucket: "bench",
    async put(key, body) {
      const path = join(dir, key);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, body);
      files.push(path);
      const day = /date=(\d{4}-\d{2}-\d{2})/.exec(key)?.[1] ?? "";
      sizes.set(
        day,
        (sizes.get(day) ?? 0) + (typeof body === "string" ? Buffer.byteLength(body) : body.byteLength),
      );
      return { bucket: "bench", key, size: 0 };
    },
    getText: async () => "",
    getBytes: async () => new Uint8Array(),
  };
  for (let i = 0; i < history.events.length; i += 100)
    await archiveBatch(
      history.events.slice(i, i + 100).map((e) => {
        const eventId = createHash("sha256").update(e.body).digest("hex");
        return {
          messageId: eventId,
          eventId,
          receivedAt: e.at + 500,
          trigger: e.trigger,
          appId: e.appId,
          body: e.body,
        };
      }),
      store,
    );
  const dayEvents = history.events.filter((e) => utcDay(e.at) === DAY);
  const rawBytes = dayEvents.reduce((s, e) => s + Buffer.byteLength(e.body), 0);
  const archived = [...sizes.values()].reduce((a, b) => a + b, 0);
  const perEventArchived = archived / history.events.length;

  // The recompute itself, on DuckDB, as the rollup runs it.
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  for (const s of [...DUCKDB_MACROS, duckDbArchiveView(files)]) await connection.run(s);
  const { first, last } = partitionsOf(DAY, { closed: true });
  const bound = bindNamed(readQuery("day-activity"), {
    app: "bench-app",
    first_date: first,
    last_date: last,
    day_start: dayStart(DAY),
    day_end: dayStart(DAY) + DAY_MS,
  });
  const started = performance.now();
  const rows = (await connection.runAndReadAll(bound.text, bound.values)).getRowObjectsJS();
  const seconds = (performance.now() - started) / 1000;
  const activity = activityFromRows(rows as never, { hours: 24, top: TOP_LIMIT });
  connection.closeSync();
  instance.closeSync();

  // Steady state: the neighbouring receipt days are as large as this one.
  const dayBytes = sizes.get(DAY) ?? 0;
  // While the day is open (today's runs): D alone (D+1 empty). Once over (the recomputes that make
  // it final): D-1, D and D+1, neighbours as large as the day at steady state.
  const scannedSingle = dayBytes;
  const scannedSteady = 3 * dayBytes;

  // The model at 1M events a day.
  const million = 1e6;
  const dayBytesAtScale = perEventArchived * million;
  const runs = (24 * 60) / SCHEDULE.everyMinutes;
  const yesterdayRuns = Math.ceil(SCHEDULE.graceMinutes / SCHEDULE.everyMinutes);
  // Today's run reads D (a growing part; D-1 only once the day is over); yesterday's reads D-2,
  // D-1 and the start of D.
  const todayScans = Array.from({ length: runs }, (_, k) => (k + 1) / runs).reduce((a, b) => a + b, 0);
  const yesterdayScans = Array.from(
    { length: yesterdayRuns },
    (_, k) => 2 + ((k + 1) * SCHEDULE.everyMinutes) / 1440,
  ).reduce((a, b) => a + b, 0);
  const queries = runs + yesterdayRuns;
  const athenaBytes = (todayScans + yesterdayScans) * dayBytesAtScale;
  const athena = Math.max(athenaBytes, queries * PRICE.athenaMinimumBytes) * PRICE.athenaPerByte;
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
  const added = athena + lambda + dynamo + s3;

  console.log(
    `simulated day ${DAY}: ${dayEvents.length} events (${EVENTS} generated), recompute on DuckDB ${seconds.toFixed(2)} s`,
  );
  console.log(
    `  figures: ${activity.figures.messages} messages, ${activity.figures.active_users} active users, peak online ${activity.figures.peak_online}`,
  );
  console.table({
    "raw JSON of the day (bodies)": { bytes: rawBytes, "× raw JSON": 1 },
    "archive, receipt day D (gzip NDJSON)": {
      bytes: dayBytes,
      "× raw JSON": Number((dayBytes / rawBytes).toFixed(3)),
    },
    "scanned per recompute of today (D so far)": {
      bytes: scannedSingle,
      "× raw JSON": Number((scannedSingle / rawBytes).toFixed(3)),
    },
    "scanned per recompute of a closed day (D-1, D, D+1)": {
      bytes: scannedSteady,
      "× raw JSON": Number((scannedSteady / rawBytes).toFixed(3)),
    },
  });
  console.log(
    `archive bytes per event: ${perEventArchived.toFixed(1)} (raw body ${(rawBytes / dayEvents.length).toFixed(1)})`,
  );
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
    "rollups, total": { "$ per 1M events": Number(added.toFixed(4)) },
    "the pipeline without them (bench:cost)": { "$ per 1M events": PIPELINE_PER_MILLION },
    "the pipeline with them": { "$ per 1M events": Number((PIPELINE_PER_MILLION + added).toFixed(4)) },
  });
  console.log(
    `targets: scanned per day ≤ 0.3× raw JSON: ${(scannedSingle / rawBytes).toFixed(3)}× per recompute of today, ${(scannedSteady / rawBytes).toFixed(3)}× per recompute of a closed day; rollups ≤ $0.10 per 1M events: $${added.toFixed(4)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
