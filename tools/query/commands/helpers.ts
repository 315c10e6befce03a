/**
 * What the query commands share: the options they take (`--app`, `--wide`, an argument, a time),
 * and the lines and rows they print an item, a recording's status, a session and, locally, an
 * archived object's file by.
 */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { isoTime, keyValueLines, TERMINAL_COLUMNS, withIsoTimes } from "../../cli/format";
import { localObjectFile, stateDir } from "../../local/state";
import type { Target } from "../../target";
import type { AnalyticsQueries } from "../queries";

/** `ISO-8601` or epoch seconds → epoch ms. */
export function parseTime(value: string): number {
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new InvalidArgumentError("expected ISO-8601 or epoch seconds.");
  return ms;
}

export const iso = isoTime;

export type Row = Record<string, unknown>;

/** Locally, the file that holds an archived object (`file`), for a person to open. */
export function withFile(
  target: Target,
  o: Record<string, unknown>,
  key: string | undefined,
): { file?: string } {
  const file =
    target.kind === "local" && target.bucket && key
      ? localObjectFile(stateDir(o.stateDir as string | undefined), target.bucket, key)
      : undefined;
  return file ? { file } : {};
}

/**
 * One item as aligned key/value lines: every time in ISO 8601 UTC whatever its stored unit
 * (`withIsoTimes`), nested values as JSON, bookkeeping left out by the queries.
 */
export function itemLines(item: object): string[] {
  const first = ["appId", "guid", "uid", "sessionId", "name", "status"];
  const rank = (k: string) => (first.includes(k) ? first.indexOf(k) : first.length);
  return keyValueLines(
    Object.entries(withIsoTimes(item)).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)),
  );
}

/** A recording's archive status in a few words: archived where, or failed why. */
export function recordingStatus(r: {
  status: string;
  key?: string;
  size?: number;
  attempts: number;
  failureReason?: string;
  failureDetail?: string;
}): string {
  if (r.status === "archived") return `archived ${r.key} (${r.size} bytes)`;
  if (r.status === "failed")
    return `failed: ${r.failureReason}${r.failureDetail ? ` (${r.failureDetail})` : ""} after ${r.attempts} attempt(s)`;
  return "pending: not archived yet";
}

export const sessionRow = (s: Awaited<ReturnType<AnalyticsQueries["sessionsBetween"]>>[number]) => ({
  sessionId: s.sessionId,
  kind: s.kind,
  outcome: s.outcome,
  initiator: s.initiator,
  receiver: s.receiver,
  startedAt: iso(s.startedAt ?? s.sessionTime),
  endedAt: iso(s.endedAt),
  durationSeconds: s.durationSeconds,
  participants: Object.keys(s.participants ?? {}).length,
  recordings: Object.keys(s.recordings ?? {}).length,
});

/** The `--app` option, the first (or `i`-th) argument, and a command that takes both. */
export const app = (o: Record<string, unknown>) => String(o.app);
export const arg = (o: Record<string, unknown>, i = 0) => String((o.args as string[])[i]);
export const withApp = (c: Command) =>
  c.requiredOption("--app <appId>", "the app").option("--json", "one JSON value on stdout");
/** `--wide`, for a command that prints a table: by default it fits `TERMINAL_COLUMNS` (`tableText`). */
export const withWide = (c: Command) =>
  c.option("--wide", `every column, however wide (by default the table fits ${TERMINAL_COLUMNS} columns)`);
