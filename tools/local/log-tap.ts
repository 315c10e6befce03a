import { createWriteStream, existsSync, renameSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { printable } from "../../shared/platform/log-safe";
import { OUTCOME_METRICS, type ServiceName } from "../../shared/platform/outcomes";
import { contributionOf, refusalInsightRule } from "../../shared/watchdog/refusal-rule";
import { shortId } from "../cli/event-id";
import type { LedgerEntry } from "./state";
import type { StatusTerminal } from "./status-line";

/**
 * What the terminal shows of the functions' lines: `status` (the default of `npm start`) only
 * WARN and ERROR lines, beside the live status line (`./status-line.ts`); `readable` every line
 * as one readable line (`--verbose`); `json` every line as the functions wrote it; `silent` none.
 */
export type LogMode = "status" | "readable" | "json" | "silent";

interface PowertoolsLine {
  level: string;
  message: string;
  service: string;
  timestamp?: string;
  [key: string]: unknown;
}

function parse(line: string): PowertoolsLine | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(line) as Partial<PowertoolsLine>;
    return typeof value.level === "string" && typeof value.service === "string"
      ? (value as PowertoolsLine)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `outcome` is a word of the service's vocabulary (`shared/platform/outcomes.ts`). */
function counted(service: ServiceName, outcome: unknown): outcome is string {
  const vocabulary: readonly string[] | undefined = OUTCOME_METRICS[service]?.outcomes;
  return vocabulary !== undefined && typeof outcome === "string" && vocabulary.includes(outcome);
}

/**
 * The outcomes a function's log line reports: the `outcome` field of a line from one of the
 * functions, checked against that function's vocabulary, and, on the projector's line of an
 * event, what became of it on the stream (`stream`: published or unpublished, #41).
 */
function outcomesOf(entry: PowertoolsLine): Array<{ service: ServiceName; outcome: string }> {
  const service = entry.service as ServiceName;
  const found: Array<{ service: ServiceName; outcome: string }> = [];
  if (counted(service, entry.outcome)) found.push({ service, outcome: entry.outcome });
  if (service === "projector" && counted("stream", entry.stream))
    found.push({ service: "stream", outcome: entry.stream });
  return found;
}

const SHOWN = [
  "trigger",
  "appId",
  "outcome",
  "stream",
  "status",
  "eventId",
  "sessionId",
  "reason",
  "key",
  "size",
  "detail",
  // A refused delivery's username as the logs keep it (#52, #58: a prefix and a hash; `apps
  // --refused` maps it to its apps), and whether the deployment knows it.
  "username",
  "usernameKnown",
  "error",
];

/** One readable line for a Powertools log line: `12:00:01 projector  event trigger=… app=… outcome=…`. */
export function readableLine(entry: PowertoolsLine): string {
  const time = (entry.timestamp ?? new Date().toISOString()).slice(11, 19);
  const fields = SHOWN.filter((k) => entry[k] !== undefined && entry[k] !== null)
    .map((k) => {
      const value = entry[k];
      const text = printable(typeof value === "object" ? JSON.stringify(value) : String(value));
      return `${k === "eventId" ? "event" : k}=${k === "eventId" ? shortId(text) : text}`;
    })
    .join(" ");
  const level = entry.level === "INFO" ? "" : ` ${printable(entry.level)}`;
  // Whatever a caller sent is shown without its control characters: a newline or an ANSI escape
  // in a field would forge a line (or colours) on the terminal and in stack.log (#58).
  return `${printable(time)} ${printable(entry.service).padEnd(9)}${level} ${printable(String(entry.message))} ${fields}`.trimEnd();
}

/** Why a WARN/ERROR line failed: its reason, else its error's name, else its outcome. */
function reasonOf(entry: PowertoolsLine): string {
  const error = entry.error as { name?: unknown } | undefined;
  if (typeof entry.reason === "string") return entry.reason;
  if (error && typeof error.name === "string") return error.name;
  return typeof entry.outcome === "string" ? entry.outcome : entry.message;
}

export interface LogTapOptions {
  mode: LogMode;
  /** Each counted line: an outcome or a failure (the local stack's ledger, for `stats`). */
  count: (entry: LedgerEntry) => void;
  /** Every line of the functions, readable, whatever the mode (the state directory's log). */
  log?: (line: string) => void;
  /** The live status line, stepped around when other output is written (`status` mode). */
  terminal?: StatusTerminal;
  /**
   * Each refusal of a known username, as the deployed Contributor Insights rule counts it (the
   * same rule, `refusalInsightRule`, on the same lines): the local stand-in `apps --refused` reads.
   */
  refused?: (username: string, at: number) => void;
  /** Injected clock (ms), for `status` mode's repeats. @default Date.now */
  now?: () => number;
}

/** The refusal rule as the local stack applies it (no log group: the lines are this process's). */
const LOCAL_REFUSAL_RULE = refusalInsightRule("local");

/** How long `status` mode keeps a repeated warning (same function, same reason) to the log alone. */
export const REPEAT_QUIET_MS = 10 * 60_000;

/** The widest a line of the functions is shown in `status` mode; the log keeps it whole. */
const STATUS_WIDTH = 100;

/**
 * What `status` mode shows of a WARN or ERROR line: the line within 100 columns (cut with `…`, the
 * whole line in stack.log); the same warning again (the same function and reason: a recorder
 * retrying a fetch every 30 s) within `REPEAT_QUIET_MS` of the one shown, a one-line word that
 * the next go to the log alone, then nothing until the quiet ends.
 */
export function warningFilter(now: () => number = Date.now) {
  const shown = new Map<string, { at: number; told: boolean }>();
  return (
    entry: { service: string; level: string },
    reason: string,
    readable: string,
  ): string | undefined => {
    const key = `${entry.service}|${entry.level}|${reason}`;
    const last = shown.get(key);
    const at = now();
    if (last && at - last.at < REPEAT_QUIET_MS) {
      if (last.told) return undefined;
      last.told = true;
      return toWidth(
        `${readable.slice(0, 8)} ${entry.service.padEnd(9)} ${entry.level} ${reason} again: the same in the next ${REPEAT_QUIET_MS / 60_000} minutes goes to stack.log only`,
      );
    }
    shown.set(key, { at, told: false });
    return toWidth(readable);
  };
}

const toWidth = (line: string) =>
  line.length <= STATUS_WIDTH ? line : `${line.slice(0, STATUS_WIDTH - 1)}…`;

/**
 * Taps this process's stdout and stderr (Powertools writes WARN and ERROR lines to stderr): each
 * of the functions' JSON lines that reports an outcome, or a failure, is handed to `count`; every
 * one is handed to `log` as a readable line; and the terminal gets what `mode` says (`LogMode`).
 * Other output passes untouched, around the status line. Returns a function that removes the tap.
 */
export function tapFunctionLogs(options: LogTapOptions): () => void {
  const { mode, count, log, terminal, refused } = options;
  const warning = warningFilter(options.now);
  const tap = (stream: NodeJS.WriteStream) => {
    const original = stream.write.bind(stream);
    let pending = "";
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      pending += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      const out: string[] = [];
      for (const line of lines) {
        const entry = parse(line);
        if (!entry) {
          out.push(line);
          continue;
        }
        for (const outcome of outcomesOf(entry))
          count([
            "outcome",
            outcome.service,
            outcome.outcome,
            ...(typeof entry.trigger === "string"
              ? [typeof entry.appId === "string" ? entry.appId : "", entry.trigger]
              : typeof entry.appId === "string"
                ? [entry.appId]
                : []),
          ] as LedgerEntry);
        const contributor = refused && contributionOf(LOCAL_REFUSAL_RULE, entry);
        if (contributor) refused?.(contributor, Date.now());
        const failure = entry.level === "WARN" || entry.level === "ERROR";
        if (failure) count(["failure", entry.service, reasonOf(entry)]);
        const readable = readableLine(entry);
        log?.(readable);
        if (mode === "json") out.push(line);
        else if (mode === "readable") out.push(readable);
        else if (mode === "status" && failure) {
          const shown = warning(entry, reasonOf(entry), readable);
          if (shown !== undefined) out.push(shown);
        }
      }
      if (out.length === 0) return true;
      terminal?.beforeOutput();
      const written = original(`${out.join("\n")}\n`, ...(rest as []));
      terminal?.afterOutput();
      return written;
    }) as typeof stream.write;
    return () => {
      stream.write = original;
    };
  };
  const restores = [tap(process.stdout), tap(process.stderr)];
  return () => {
    for (const restore of restores) restore();
  };
}

/** The state directory's log of the functions' lines. */
export const STACK_LOG_FILE = "stack.log";

/**
 * The state directory's log (`stack.log`): every line of the functions, readable, appended as
 * they come (buffered: a `kill -9` may lose the last lines; the counters never are, they are the
 * ledger's). The previous start's log is kept as `stack.log.1`, and a log past `maxBytes` starts
 * over the same way, so two logs at most are kept.
 *
 * @example const log = stackLog(".local"); log.write("12:00:01 projector DEBUG event …"); await log.close()
 */
export function stackLog(dir: string, maxBytes = 64 * 1024 * 1024) {
  const path = join(dir, STACK_LOG_FILE);
  let stream: WriteStream;
  let bytes = 0;
  const open = () => {
    if (existsSync(path)) renameSync(path, `${path}.1`);
    stream = createWriteStream(path, { flags: "a", mode: 0o600 });
    bytes = 0;
  };
  open();
  return {
    write(line: string) {
      if (bytes > maxBytes) {
        stream.end();
        open();
      }
      bytes += Buffer.byteLength(line) + 1;
      stream.write(`${line}\n`);
    },
    close: () => new Promise<void>((resolve) => stream.end(resolve)),
  };
}
