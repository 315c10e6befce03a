/**
 * bench:activity's whole bill of the rollups (#59), at 1M events a day: the engine's reads of the
 * archive counted from the partitions each scheduled pass matches (`scheduleReads`), checked
 * against the GETs the local engine makes through the counting proxy for the same pass; Athena's
 * bytes, the S3 GETs and LISTs, the access-log records those requests write, Athena's result
 * objects, the function's GB-seconds, DynamoDB and the edge PUTs, each per million events; and the
 * same reads in the direction the issue names (compacted as the day goes), modelled, not built.
 */

import { readFileSync } from "node:fs";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { duckDbEngine } from "../shared/analytics/engines/duckdb-sql-engine";
import { dayActivity } from "../shared/analytics/rollup";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../tools/local/emulators";
import { compactedReads, type Schedule, scheduleReads, type Written } from "./activity-reads";
import { reportLine, reportTable } from "./pipeline-cost/doc-block";
import { ATHENA } from "./pipeline-cost/fixed-month";
import { ACCESS_LOG_RECORD_BYTES, accessLogUsd, PRICE } from "./pipeline-cost/model";
import type { Bench } from "./pipeline-cost/start";
import { storageByMonth } from "./pipeline-cost/storage";

/** Athena writes a query's results and their metadata under `athena-results/`: two PUTs a query (modelled). */
const RESULT_PUTS_PER_QUERY = 2;
/** A Parquet object read by Athena: its footer, then its column chunks (modelled: 2 GETs). */
const GETS_PER_PARQUET = 2;

/**
 * A closed day's pass, as the schedule's final pass runs it, on the local engine (DuckDB reading
 * the archive through the S3 API) behind the counting proxy: the objects uploaded to fauxqs, the
 * GETs and LISTs the engine made, against the objects the pass's partitions match.
 */
export async function engineReadCheck(bench: Bench, objects: readonly Written[], day: string, app: string) {
  const bucket = "activity-reads";
  await bench.direct.s3.send(new CreateBucketCommand({ Bucket: bucket }));
  for (const o of objects)
    await bench.direct.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: o.key, Body: readFileSync(o.path) }),
    );
  const s3 = new S3Client({
    region: LOCAL_REGION,
    endpoint: bench.aws.endpoint,
    forcePathStyle: true,
    credentials: LOCAL_CREDENTIALS,
  });
  bench.aws.counts.clear();
  const pass = await dayActivity(duckDbEngine({ s3, bucket }), app, day);
  s3.destroy();
  const counts = Object.fromEntries(bench.aws.counts);
  const matched = objects.filter((o) => o.day === day);
  return {
    engineGets: counts["s3:GET"] ?? 0,
    refusedGets: counts["s3:GET:refused"] ?? 0,
    engineLists: counts["s3:List"] ?? 0,
    engineBytes: pass.bytesScanned,
    matchedGets: matched.length,
    matchedBytes: matched.reduce((s, o) => s + o.bytes, 0),
  };
}

/** What the bill of the rollups is priced with, besides the reads. */
export interface BillInputs {
  objects: readonly Written[];
  /** Deliveries received on the day (the archive's raw objects hold them). */
  deliveries: number;
  day: string;
  schedule: Schedule;
  rollupMemoryMb: number;
  secondsPerQuery: number;
  accessLogDays: number;
  /** DynamoDB's $ per 1M events of the schedule's writes at 1M a day (bench:activity's model). */
  dynamoPerMillion: number;
  parquetRatio: number;
}

/**
 * The rollups' bill per million events at 1M events a day, from the day's objects at one batch
 * size: now (every pass reads the raw objects of the day so far) and in the modelled direction.
 * What follows the traffic (objects, bytes, pages of a listing) is scaled from the simulated
 * day's deliveries to a million; what follows the schedule (queries, their results, compacted
 * objects read per pass) is counted a day as it is.
 */
export function rollupBill(b: BillInputs) {
  const scale = 1e6 / b.deliveries;
  const reads = scheduleReads(b.objects, b.day, b.schedule, scale);
  const raw = b.objects.filter((o) => o.day === b.day && o.table === "raw").length * scale;
  const edge = b.objects.filter((o) => o.day === b.day && o.table === "edge").length * scale;
  const athena = (bytes: number, queries: number) =>
    Math.max(bytes, queries * ATHENA.minimumBytes) * ATHENA.perByte;
  const lambda = (queries: number) =>
    queries * b.secondsPerQuery * (b.rollupMemoryMb / 1024) * PRICE.lambdaGbSecond +
    ((24 * 60) / b.schedule.everyMinutes) * PRICE.lambdaRequest;
  /** The items of a day at 1M events ($ a day = $ per million events), from its counts. */
  const requests = (day: { gets: number; lists: number; puts: number; queries: number }) =>
    day.gets + day.lists + day.puts + day.queries * RESULT_PUTS_PER_QUERY;
  const lines = (day: { gets: number; lists: number; puts: number; bytes: number; queries: number }) => {
    const puts = day.queries * RESULT_PUTS_PER_QUERY + day.puts;
    return [
      { item: "Athena, bytes scanned (≥ 10 MB a query)", usd: athena(day.bytes, day.queries) },
      { item: "S3 GETs of archive objects (analytics)", usd: day.gets * PRICE.s3Get },
      { item: "S3 LISTs of partitions (analytics)", usd: day.lists * PRICE.s3Put },
      { item: "S3 PUTs: Athena's results, compacted objects", usd: puts * PRICE.s3Put },
      {
        item: `S3 access log: a record per request above (kept ${b.accessLogDays} days)`,
        usd: accessLogUsd(day.gets + day.lists + puts, b.accessLogDays),
      },
      {
        item: `rollup function, GB-s (${b.secondsPerQuery} s a query at ${b.rollupMemoryMb} MB, modelled)`,
        usd: lambda(day.queries),
      },
      { item: "DynamoDB (the schedule's writes)", usd: b.dynamoPerMillion },
      { item: "edge object PUTs (the projector)", usd: edge * PRICE.s3Put },
    ];
  };
  const today = { gets: reads.gets, lists: reads.lists, puts: 0, bytes: reads.bytes, queries: reads.queries };
  const now = lines(today);
  const modelled = compactedReads(b.objects, b.day, b.schedule, {
    getsPerCompacted: GETS_PER_PARQUET,
    parquetRatio: b.parquetRatio,
    scale,
  });
  // One compaction query a tick beside the pass; a pass lists the day's compacted prefix once.
  const directionQueries = reads.queries + (24 * 60) / b.schedule.everyMinutes;
  const modelledDay = {
    gets: modelled.gets,
    lists: reads.passes.length + modelled.compactionLists,
    puts: modelled.puts,
    bytes: modelled.bytes,
    queries: directionQueries,
  };
  const direction = lines(modelledDay);
  return {
    reads,
    rawPerDelivery: raw / 1e6,
    edgePerDelivery: edge / 1e6,
    getsPerDelivery: reads.gets / 1e6,
    listsPerDelivery: reads.lists / 1e6,
    readsPerObject: reads.gets / Math.max(1, raw + edge),
    bytesADay: reads.bytes,
    archiveADay: reads.archiveBytes,
    rawArchiveADay: reads.compaction.bytes,
    requestsADay: requests(today),
    now,
    direction: {
      getsPerDelivery: modelled.gets / 1e6,
      bytesADay: modelled.bytes,
      requestsADay: requests(modelledDay),
      lines: direction,
    },
  };
}

export const total = (lines: ReadonlyArray<{ usd: number }>) => lines.reduce((s, l) => s + l.usd, 0);

const round = (n: number, digits = 4) => Number(n.toFixed(digits));
const gib = (bytes: number) => round(bytes / 1024 ** 3, 2);

/**
 * Prints the reads of each batch size (now, the goal of #59, the modelled direction), the rollups'
 * items per million events beside each other, the pipeline's items measured in this run, and the
 * totals.
 */
export function printBills(
  bills: ReadonlyArray<{ name: string; batch: number; bill: ReturnType<typeof rollupBill> }>,
  pipeline: ReadonlyArray<{ item: string; perMillion: number; perEvent: number }>,
  queriesADay: number,
  storage: { parquetRatio: number; accessLogDays: number; infrequentAccessDays: number; glacierDays: number },
) {
  reportTable(
    `At 1M events a day, the schedule's reads of a day (${queriesADay} passes: today every tick, yesterday until final; and yesterday's compaction), counted per batch size:`,
    bills.map(({ name, bill }) => ({
      archive: name,
      "raw objects / delivery": round(bill.rawPerDelivery),
      "edge objects / delivery": round(bill.edgePerDelivery),
      "analytics GETs / delivery, now": round(bill.getsPerDelivery),
      "reads per object, now": round(bill.readsPerObject, 1),
      "goal: ≤ raw / delivery + 0.005": round(bill.rawPerDelivery + 0.005),
      "GETs / delivery, direction (modelled)": round(bill.direction.getsPerDelivery),
      "LISTs / delivery, now": round(bill.listsPerDelivery),
    })),
  );
  const first = bills[0]?.bill;
  if (first)
    reportLine(
      `bytes scanned a day, now: ${gib(first.bytesADay)} GiB, beside the day's archive of ${gib(first.archiveADay)} GiB (${round(first.bytesADay / first.archiveADay, 1)}×); in the modelled direction (the same lines in Parquet at each pass, each raw byte compacted once): ${gib(first.direction.bytesADay)} GiB (${round(first.direction.bytesADay / first.archiveADay, 1)}×)`,
    );
  const columns = [
    ...bills.map((b) => ({ name: `now, batches of ${b.batch}`, lines: b.bill.now })),
    ...bills
      .slice(1, 2)
      .map((b) => ({ name: `direction (modelled), batches of ${b.batch}`, lines: b.bill.direction.lines })),
  ];
  const items = columns[0]?.lines.map((l) => l.item) ?? [];
  reportTable("the rollups' items, $ per million events at 1M events a day:", [
    ...items.map((item, i) => ({
      item,
      ...Object.fromEntries(columns.map((c) => [c.name, round(c.lines[i]?.usd ?? 0)])),
    })),
    { item: "rollups, total", ...Object.fromEntries(columns.map((c) => [c.name, round(total(c.lines))])) },
  ]);
  const pipelineTotal = pipeline.reduce((s, l) => s + l.perMillion, 0);
  reportTable(
    "the pipeline's items, $ per million events (bench:cost's one app at 100 events/s, measured in this run):",
    pipeline.map((l) => ({ item: l.item, "$ per 1M events": round(l.perMillion) })),
  );
  reportTable(
    "the whole bill, $ per million events at 1M events a day:",
    columns.map((c) => ({
      "the whole bill": c.name,
      "pipeline $ / 1M": round(pipelineTotal, 3),
      "rollups $ / 1M": round(total(c.lines), 3),
      "total $ / 1M events": round(pipelineTotal + total(c.lines), 3),
    })),
  );
  const named = bills[1] ?? bills[0];
  if (named) printStorage(named, pipeline, storage);
  for (const { name, bill } of bills)
    reportLine(
      `goal of #59 at ${name}: analytics GETs per delivery ≤ raw objects per delivery + 0.005 = ${round(bill.rawPerDelivery + 0.005)}: now ${round(bill.getsPerDelivery)} (${bill.getsPerDelivery <= bill.rawPerDelivery + 0.005 ? "met" : "NOT met"}); modelled direction ${round(bill.direction.getsPerDelivery)} (${bill.direction.getsPerDelivery <= bill.rawPerDelivery + 0.005 ? "would meet it" : "would not"})`,
    );
}

/**
 * The data bucket's storage for a year of 1M events a day at the named batch size, month by
 * month: before #59 (the Parquet in Standard: no rule covered it), now (it moves at the archive's
 * days), and with the modelled direction's fewer access-log records; the raw archive stays in
 * Standard (each object under 128 KB).
 */
function printStorage(
  named: { name: string; bill: ReturnType<typeof rollupBill> },
  pipeline: ReadonlyArray<{ item: string; perEvent: number }>,
  s: { parquetRatio: number; accessLogDays: number; infrequentAccessDays: number; glacierDays: number },
) {
  const { bill } = named;
  const pipelineRecords = (pipeline.find((l) => l.item.startsWith("S3 access log"))?.perEvent ?? 0) * 1e6;
  const base = {
    rawBytesADay: bill.archiveADay,
    parquetBytesADay: bill.rawArchiveADay * s.parquetRatio,
    accessLogDays: s.accessLogDays,
    infrequentAccessDays: s.infrequentAccessDays,
    glacierDays: s.glacierDays,
  };
  const log = (requests: number) => (pipelineRecords + requests) * ACCESS_LOG_RECORD_BYTES;
  const before = storageByMonth({ ...base, parquetMoves: false, accessLogBytesADay: log(bill.requestsADay) });
  const now = storageByMonth({ ...base, parquetMoves: true, accessLogBytesADay: log(bill.requestsADay) });
  const direction = storageByMonth({
    ...base,
    parquetMoves: true,
    accessLogBytesADay: log(bill.direction.requestsADay),
  });
  reportTable(
    `storage of the data bucket for a year of 1M events a day (${named.name}; the day's archive ${gib(base.rawBytesADay)} GiB in Standard, its Parquet ${gib(base.parquetBytesADay)} GiB moving to IA after ${s.infrequentAccessDays} days and Glacier IR after ${s.glacierDays}; access log ${round(log(bill.requestsADay) / 1024 ** 3, 2)} GiB a day now, ${round(log(bill.direction.requestsADay) / 1024 ** 3, 3)} in the modelled direction, kept ${s.accessLogDays} days):`,
    now.map((m, i) => ({
      month: m.month,
      "archive GB": round(m.rawGb, 1),
      "Parquet GB": round(m.parquetGb, 1),
      "access log GB": round(m.accessLogGb, 1),
      "$ before #59 (Parquet in Standard)": round(before[i]?.usd ?? 0, 2),
      "$ now": round(m.usd, 2),
      "$ direction (modelled)": round(direction[i]?.usd ?? 0, 2),
    })),
  );
}
