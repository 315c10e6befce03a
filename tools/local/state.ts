import {
  appendFileSync,
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import type { TableNames } from "../../shared/platform/tables";
import { alive } from "./lock";
import type { LocalStream } from "./stream";

/**
 * What a running local stack tells the other commands (`simulate`, `query`, `redrive`, `replay`):
 * written to `<LOCAL_STATE_DIR>/stack.json` while it runs, removed when it stops. It holds the
 * development credentials in use, so the file is readable by its owner only.
 */
export interface LocalStackInfo {
  pid: number;
  webhookUrl: string;
  healthUrl: string;
  /** The console's page (#23), when `npm start` serves it. */
  consoleUrl?: string;
  region: string;
  endpoints: { aws: string; dynamodb: string };
  tables: TableNames;
  /** The activity table (#20); absent in a state file written before. */
  activityTable?: string;
  /** The apps table (per-app settings); absent in a state file written before. */
  appsTable?: string;
  bucket: string;
  queues: Record<"events" | "recordings", { url: string; arn: string; deadLetterUrl: string }>;
  /** The stream of facts (#41): its topic, unpublished queue and subscribers; absent in a state file written before. */
  stream?: LocalStream;
  credentials: { username: string; password: string };
  startedAt: string;
  /**
   * The apps `simulate` last delivered to here, in its order (#52): the console's per-app views
   * open on the first (the README's `--app sim-s7-a1`); absent until a simulation.
   */
  simulatedApps?: string[];
}

/** Outcome counters the local stack keeps from its functions' logs (`npm run query -- stats`). */
export interface LocalStats {
  /** Outcomes per function. */
  total: Record<string, Record<string, number>>;
  /** Outcomes per app and function. */
  apps: Record<string, Record<string, Record<string, number>>>;
  /** WARN and ERROR lines per function, by reason. */
  failures: Record<string, Record<string, number>>;
}

export function stateDir(dir = process.env.LOCAL_STATE_DIR ?? ".local"): string {
  return resolve(dir);
}

export function writeStackInfo(dir: string, info: LocalStackInfo): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "stack.json");
  writeFileSync(file, JSON.stringify(info, null, 2));
  chmodSync(file, 0o600);
}

/** Changes fields of the running stack's `stack.json`, if one is there (nothing otherwise). */
export function updateStackInfo(dir: string, change: Partial<LocalStackInfo>): void {
  const file = join(dir, "stack.json");
  let info: LocalStackInfo;
  try {
    info = JSON.parse(readFileSync(file, "utf8")) as LocalStackInfo;
  } catch {
    return;
  }
  writeStackInfo(dir, { ...info, ...change });
}

export function removeStackInfo(dir: string): void {
  rmSync(join(dir, "stack.json"), { force: true });
}

/** The running stack's info, or a clear error saying how to start one. */
export class NoLocalStackError extends Error {
  override name = "NoLocalStackError";
}

export function readStackInfo(dir = stateDir()): LocalStackInfo {
  const file = join(dir, "stack.json");
  const hint = "start one with `npm start` (or name its --state-dir), or point to AWS with --stack";
  if (!existsSync(file)) throw new NoLocalStackError(`no local stack is running in ${dir}: ${hint}`);
  const info = JSON.parse(readFileSync(file, "utf8")) as LocalStackInfo;
  // A stack killed without its shutdown leaves its stack.json behind.
  if (!alive(info.pid))
    throw new NoLocalStackError(`the local stack of ${dir} (pid ${info.pid}) is not running: ${hint}`);
  return info;
}

/**
 * One counted line of the functions' logs: an outcome (with its app, "" when it had none, and its
 * trigger), or a WARN/ERROR by reason.
 */
export type LedgerEntry = ["outcome", string, string, string?, string?] | ["failure", string, string];

const STATS_FILE = "stats.json";
const LEDGER_FILE = "outcomes.ndjson";

function bump(counters: Record<string, Record<string, number>>, service: string, key: string): void {
  const byKey = counters[service] ?? {};
  byKey[key] = (byKey[key] ?? 0) + 1;
  counters[service] = byKey;
}

/** Adds one ledger entry to the counters. */
function countEntry(stats: LocalStats, entry: LedgerEntry): void {
  if (entry[0] === "failure") {
    bump(stats.failures, entry[1], entry[2]);
    return;
  }
  const [, service, outcome, appId] = entry;
  bump(stats.total, service, outcome);
  if (appId) {
    const app = stats.apps[appId] ?? {};
    bump(app, service, outcome);
    stats.apps[appId] = app;
  }
}

/**
 * Appends one entry to the state directory's ledger, synchronously: an outcome is on disk before
 * the handler that logged it returns (and so before its message is deleted), so the counters
 * survive any stop, `kill -9` included.
 */
export function appendLedger(dir: string, entry: LedgerEntry, at = Date.now()): void {
  appendFileSync(join(dir, LEDGER_FILE), `${JSON.stringify({ at, entry } satisfies LedgerLine)}\n`);
}

/** A ledger line: the entry and when it was counted (lines written before #23 are bare entries). */
export interface LedgerLine {
  at?: number;
  entry: LedgerEntry;
}

/** One line of the ledger, either form; undefined for a line cut short by a kill. */
function parseLedgerLine(line: string): LedgerLine | undefined {
  try {
    const value = JSON.parse(line) as LedgerEntry | LedgerLine;
    return Array.isArray(value) ? { entry: value } : value;
  } catch {
    return undefined;
  }
}

/**
 * Reads the ledger as it grows: each call returns the lines appended since the previous one (the
 * first call, every line). A ledger compacted or reset in between (a restart) is read from its
 * start again. Only whole lines are returned; a line being written is read next time.
 */
export function ledgerFollower(dir: string): () => LedgerLine[] {
  const file = join(dir, LEDGER_FILE);
  let offset = 0;
  return () => {
    if (!existsSync(file)) {
      offset = 0;
      return [];
    }
    const size = statSync(file).size;
    if (size < offset) offset = 0;
    if (size === offset) return [];
    const buffer = Buffer.alloc(size - offset);
    const fd = openSync(file, "r");
    try {
      readSync(fd, buffer, 0, buffer.length, offset);
    } finally {
      closeSync(fd);
    }
    const end = buffer.lastIndexOf(0x0a);
    if (end < 0) return [];
    offset += end + 1;
    return buffer
      .subarray(0, end)
      .toString("utf8")
      .split("\n")
      .flatMap((line) => {
        const parsed = line ? parseLedgerLine(line) : undefined;
        return parsed ? [parsed] : [];
      });
  };
}

/** The ledger's whole lines (a line cut short by a kill is left out: nothing else was counted in it). */
function ledgerLines(dir: string): Array<{ text: string; line: LedgerLine }> {
  const ledger = join(dir, LEDGER_FILE);
  if (!existsSync(ledger)) return [];
  return readFileSync(ledger, "utf8")
    .split("\n")
    .flatMap((text) => {
      const line = text ? parseLedgerLine(text) : undefined;
      return line ? [{ text, line }] : [];
    });
}

/** The last compacted snapshot of the counters (empty if none). */
function readSnapshot(dir: string): LocalStats {
  const stats: LocalStats = { total: {}, apps: {}, failures: {} };
  const snapshot = join(dir, STATS_FILE);
  if (existsSync(snapshot))
    Object.assign(stats, JSON.parse(readFileSync(snapshot, "utf8")) as Partial<LocalStats>);
  stats.failures ??= {};
  return stats;
}

/** The counters: the last compacted snapshot plus the ledger since (`npm run query -- stats`). */
export function readStats(dir = stateDir()): LocalStats {
  const stats = readSnapshot(dir);
  for (const { line } of ledgerLines(dir)) countEntry(stats, line.entry);
  return stats;
}

/**
 * Folds the ledger into the snapshot and starts a new ledger (at each start), keeping in the new
 * ledger the lines counted at or after `keepSince` (ms): the console's live flow reads its last
 * minutes from them across a restart. The counters (`readStats`) are the same before and after.
 */
export function compactStats(dir: string, keepSince = Number.POSITIVE_INFINITY): void {
  const snapshot = readSnapshot(dir);
  const kept: string[] = [];
  for (const { text, line } of ledgerLines(dir))
    if (line.at !== undefined && line.at >= keepSince) kept.push(`${text}\n`);
    else countEntry(snapshot, line.entry);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, STATS_FILE), JSON.stringify(snapshot, null, 2));
  writeFileSync(join(dir, LEDGER_FILE), kept.join(""));
}

/** Forgets every counter (a `--clean` or in-memory start). */
export function resetStats(dir: string): void {
  rmSync(join(dir, STATS_FILE), { force: true });
  rmSync(join(dir, LEDGER_FILE), { force: true });
}

/**
 * Where the local stack keeps an object of its bucket, if it is there: fauxqs's file persistence
 * writes `<state dir>/s3/buckets/<bucket>/objects/<key>.data` (its `/` as directories, characters
 * unsafe in file names percent-encoded) beside a `.meta.json`. Undefined in memory or when absent.
 *
 * @example localObjectFile(".local", "local-data", "recordings/app1/2026/01/02/s1/1696937627.mp4")
 *   // "/…/.local/s3/buckets/local-data/objects/recordings/app1/2026/01/02/s1/1696937627.mp4.data"
 */
export function localObjectFile(dir: string, bucket: string, key: string): string | undefined {
  const encoded = [...key]
    .map((c) =>
      /[<>:"|?*\\%]/.test(c) || c.charCodeAt(0) < 0x20
        ? `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`
        : c,
    )
    .join("");
  const file = join(resolve(dir), "s3", "buckets", bucket, "objects", ...encoded.split("/"));
  return existsSync(`${file}.data`) ? `${file}.data` : undefined;
}
