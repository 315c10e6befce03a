import { OUTCOME_METRICS, type ServiceName } from "../../shared/platform/outcomes";
import { shortId } from "../cli/event-id";
import type { LedgerEntry } from "./state";

export type LogMode = "readable" | "json" | "silent";

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
  "error",
];

/** One readable line for a Powertools log line: `12:00:01 projector  event trigger=… app=… outcome=…`. */
export function readableLine(entry: PowertoolsLine): string {
  const time = (entry.timestamp ?? new Date().toISOString()).slice(11, 19);
  const fields = SHOWN.filter((k) => entry[k] !== undefined && entry[k] !== null)
    .map((k) => {
      const value = entry[k];
      const text = typeof value === "object" ? JSON.stringify(value) : String(value);
      return `${k === "eventId" ? "event" : k}=${k === "eventId" ? shortId(text) : text}`;
    })
    .join(" ");
  const level = entry.level === "INFO" ? "" : ` ${entry.level}`;
  return `${time} ${entry.service.padEnd(9)}${level} ${entry.message} ${fields}`.trimEnd();
}

/** Why a WARN/ERROR line failed: its reason, else its error's name, else its outcome. */
function reasonOf(entry: PowertoolsLine): string {
  const error = entry.error as { name?: unknown } | undefined;
  if (typeof entry.reason === "string") return entry.reason;
  if (error && typeof error.name === "string") return error.name;
  return typeof entry.outcome === "string" ? entry.outcome : entry.message;
}

/**
 * Taps this process's stdout and stderr (Powertools writes WARN and ERROR lines to stderr): each
 * of the functions' JSON lines that reports an outcome, or a failure, is handed to `count` (the
 * local stack's ledger, for `stats`) and, unless JSON is asked for, rewritten as one readable
 * line. Other output passes untouched. Returns a function that removes the tap.
 */
export function tapFunctionLogs(mode: LogMode, count: (entry: LedgerEntry) => void): () => void {
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
        if (entry.level === "WARN" || entry.level === "ERROR")
          count(["failure", entry.service, reasonOf(entry)]);
        if (mode === "json") out.push(line);
        else if (mode === "readable") out.push(readableLine(entry));
      }
      if (out.length === 0) return true;
      return original(`${out.join("\n")}\n`, ...(rest as []));
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
