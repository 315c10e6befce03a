/**
 * What the rollup's schedule reads of a day's archive, counted from the objects its passes'
 * partitions match (#59): every tick's pass of today and yesterday's passes until final read the
 * day's raw objects and edge objects archived before the tick (Athena reads each gzip object
 * whole: one GET), and list the partitions they name (projection over `date` and `hour`: 24 hour
 * prefixes and the edge's, one LIST a page of 1,000 keys each); yesterday's compaction to
 * Parquet, at the tick of its final pass, reads its raw objects once more. `bench:activity`
 * checks the count against the GETs the local engine makes for the same pass through the
 * counting proxy.
 */
import { dayStart } from "../shared/analytics/rollup";

/** An object the simulated archive got: its table, receipt (or edge) day, hour, size and when its batch was archived. */
export interface Written {
  path: string;
  key: string;
  table: "raw" | "edge";
  day: string;
  hour: string;
  bytes: number;
  at: number;
}

const DAY_MS = 86_400_000;

/** The schedule's settings the reads follow (infra/config.ts's defaults). */
export interface Schedule {
  everyMinutes: number;
  graceMinutes: number;
}

/** One pass: its tick, whether yesterday's, and what it matched. */
export interface PassRead {
  at: number;
  yesterday: boolean;
  final: boolean;
  gets: number;
  lists: number;
  bytes: number;
}

/**
 * The LIST requests of one pass over `day`: a page of 1,000 keys per prefix (24 hours and the
 * edge), at least one each, with the objects scaled by `scale`.
 */
function listsOf(matched: readonly Written[], scale: number): number {
  const byPrefix = new Map<string, number>();
  for (let h = 0; h < 24; h++) byPrefix.set(`raw ${String(h).padStart(2, "0")}`, 0);
  byPrefix.set("edge", 0);
  for (const o of matched) {
    const prefix = o.table === "raw" ? `raw ${o.hour}` : "edge";
    byPrefix.set(prefix, (byPrefix.get(prefix) ?? 0) + 1);
  }
  return [...byPrefix.values()].reduce((s, n) => s + Math.max(1, Math.ceil((n * scale) / 1000)), 0);
}

/** The objects a pass over `day` at `at` matches: the day's raw and edge objects archived before the tick. */
export function matchedAt(objects: readonly Written[], day: string, at: number): Written[] {
  return objects.filter((o) => o.day === day && o.at < at);
}

/**
 * Every pass the schedule makes over `day` (today's at each tick of the day, yesterday's from
 * midnight until the first tick at or after its end plus the grace period, which is final) and
 * the compaction after the final pass: GETs, LISTs and bytes of each, with the traffic scaled by
 * `scale` (the objects and bytes of a day of `scale` times the simulated deliveries).
 */
export function scheduleReads(objects: readonly Written[], day: string, schedule: Schedule, scale = 1) {
  const start = dayStart(day);
  const every = schedule.everyMinutes * 60_000;
  const passes: PassRead[] = [];
  const pass = (at: number, yesterday: boolean, final: boolean) => {
    const matched = matchedAt(objects, day, at);
    passes.push({
      at,
      yesterday,
      final,
      gets: matched.length * scale,
      lists: listsOf(matched, scale),
      bytes: matched.reduce((s, o) => s + o.bytes, 0) * scale,
    });
  };
  for (let at = start; at < start + DAY_MS; at += every) pass(at, false, false);
  let at = start + DAY_MS;
  for (; at < start + DAY_MS + schedule.graceMinutes * 60_000; at += every) pass(at, true, false);
  pass(at, true, true);
  const raw = objects.filter((o) => o.day === day && o.table === "raw");
  const compaction = {
    gets: raw.length * scale,
    lists: listsOf(raw, scale),
    bytes: raw.reduce((s, o) => s + o.bytes, 0) * scale,
  };
  const sum = (k: "gets" | "lists" | "bytes") => passes.reduce((s, p) => s + p[k], 0) + compaction[k];
  return {
    passes,
    compaction,
    queries: passes.length + 1,
    gets: sum("gets"),
    lists: sum("lists"),
    bytes: sum("bytes"),
    /** The day's objects (raw and edge) and bytes, each once. */
    objects: objects.filter((o) => o.day === day).length * scale,
    archiveBytes: objects.filter((o) => o.day === day).reduce((s, o) => s + o.bytes, 0) * scale,
  };
}

/**
 * The direction of #59, modelled on the same objects (not built): each tick first compacts what
 * was archived since the last tick (raw and edge objects, each read once) into one chunk, a
 * closed hour's chunks are merged into one object at the first tick after it, and every pass
 * reads the day's closed hours and the open hour's chunks, `getsPerCompacted` GETs each (a
 * Parquet file: its footer, then its column chunks). A line archived into a closed hour later (a
 * redrive, a replay) is read by the next tick's chunk like any other. The bytes a pass scans are
 * the same lines in Parquet (`parquetRatio` of the NDJSON), so bytes fall only by that ratio:
 * exact distinct figures need every key of the day at each pass.
 */
export function compactedReads(
  objects: readonly Written[],
  day: string,
  schedule: Schedule,
  options: { getsPerCompacted: number; parquetRatio: number; scale: number },
) {
  const { scale } = options;
  const { passes } = scheduleReads(objects, day, schedule, scale);
  const start = dayStart(day);
  const every = schedule.everyMinutes * 60_000;
  const mine = objects.filter((o) => o.day === day);
  // Each object read once, by the tick's compaction after it (which lists what is new).
  let gets = mine.length * scale;
  let puts = 0;
  let bytes = mine.reduce((s, o) => s + o.bytes, 0) * scale;
  const compactionLists = passes.filter((p) => !p.yesterday).length * 2;
  for (const p of passes) {
    const ticks = Math.max(0, Math.min(96, Math.round((p.at - start) / every)));
    const closedHours = Math.min(24, Math.floor((p.at - start) / 3_600_000));
    const openChunks = ticks - closedHours * (60 / schedule.everyMinutes);
    const compacted = closedHours + Math.max(0, openChunks);
    gets += compacted * options.getsPerCompacted;
    puts += p.yesterday ? 0 : 1;
    bytes += p.bytes * options.parquetRatio;
  }
  // Each closed hour's chunks read once more to merge them, and the hour's object written.
  gets += 24 * (60 / schedule.everyMinutes) * options.getsPerCompacted;
  puts += 24;
  return { gets, puts, bytes, compactionLists };
}
