import { PROJECTOR_OUTCOMES } from "../../shared/platform/outcomes";
import type { LedgerEntry } from "./state";

/**
 * `npm start`'s live status: what the stack did since it started, in one line every few seconds
 * (accepted, projected, quarantined, queued, failed), redrawn in place on a terminal and printed
 * as a plain line elsewhere (a file, a pipe: then only when something moved). The functions'
 * per-event lines go to the state directory's log instead (`--verbose` shows them here).
 */

/** What the status line counts, since the stack started. */
export interface StatusCounts {
  /** Deliveries the ingest accepted (200). */
  accepted: number;
  /** Deliveries the ingest refused (401, 403, 400, 413…). */
  refused: number;
  /** Events the projector handled: into the tables, as stale, or archived only. */
  projected: number;
  quarantined: number;
  /** Failed attempts of the projector (each is retried, then dead-lettered). */
  failed: number;
  /** Recordings archived. */
  recordings: number;
  /** The apps silent at the rollup's last run (#52, `shared/watchdog/silence.ts`). */
  silent: string[];
}

const HANDLED: ReadonlySet<string> = new Set(
  PROJECTOR_OUTCOMES.filter((o) => o !== "quarantined" && o !== "failed"),
);

/** Zero of everything. */
export function emptyCounts(): StatusCounts {
  return { accepted: 0, refused: 0, projected: 0, quarantined: 0, failed: 0, recordings: 0, silent: [] };
}

/**
 * Adds one ledger entry (a function's outcome) to the counts.
 *
 * @example countOutcome(counts, ["outcome", "ingest", "accepted", "app1", "message_sent"]) // counts.accepted + 1
 */
export function countOutcome(counts: StatusCounts, entry: LedgerEntry): void {
  if (entry[0] !== "outcome") return;
  const [, service, outcome] = entry;
  if (service === "ingest") {
    if (outcome.startsWith("accepted")) counts.accepted++;
    else counts.refused++;
  } else if (service === "projector") {
    if (HANDLED.has(outcome)) counts.projected++;
    else if (outcome === "quarantined") counts.quarantined++;
    else if (outcome === "failed") counts.failed++;
  } else if (service === "recorder" && outcome === "archived") counts.recordings++;
}

const n = (value: number) => value.toLocaleString("en-US");

/**
 * The status line: the time (UTC), then the counts; refused deliveries, recordings and the silent
 * apps (the first two named) only once there are some, and queued as unknown ("?") while the queue could not be read.
 *
 * @example statusText(counts, 7, Date.UTC(2026, 0, 2, 3, 4, 5)) // "03:04:05Z  accepted 5,270  projected 5,262  quarantined 3  queued 7  failed 0"
 */
export function statusText(counts: StatusCounts, queued: number | undefined, at: number): string {
  const parts = [
    `accepted ${n(counts.accepted)}`,
    ...(counts.refused ? [`refused ${n(counts.refused)}`] : []),
    `projected ${n(counts.projected)}`,
    `quarantined ${n(counts.quarantined)}`,
    `queued ${queued === undefined ? "?" : n(queued)}`,
    `failed ${n(counts.failed)}`,
    ...(counts.recordings ? [`recordings ${n(counts.recordings)}`] : []),
    ...(counts.silent.length
      ? [
          `silent ${counts.silent.length} (${counts.silent.slice(0, 2).join(", ")}${counts.silent.length > 2 ? ", …" : ""})`,
        ]
      : []),
  ];
  return `${new Date(at).toISOString().slice(11, 19)}Z  ${parts.join("  ")}`;
}

/** Where the status line is drawn, and how it meets the other output there. */
export interface StatusTerminal {
  /** Takes the line off the screen before other output is written (a terminal), so that output never lands in it. */
  beforeOutput(): void;
  /** Puts it back after. */
  afterOutput(): void;
}

export interface StatusLineOptions {
  /**
   * Where to draw: a terminal's write as it was before the log tap wrapped it (the tap steps
   * around the line through `terminal`), whether it is a TTY, and its width.
   */
  stream: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  /** How often, ms. @default 5000 */
  everyMs?: number;
  now?: () => number;
}

/**
 * The live status line: fed with the functions' outcomes (`count`), drawn every `everyMs` with
 * the events queue's depth (`queued`). On a terminal it is redrawn in place and stepped around
 * other output (`beforeOutput`/`afterOutput`, which the log tap calls); elsewhere a plain line is
 * printed when the counts or the queue moved since the last one. `stop` prints the last line.
 *
 * @example const status = statusLine({ stream: { write: process.stdout.write.bind(process.stdout) } }); status.start(() => queueDepth(sqs, url)); … status.count(entry)
 */
export function statusLine(options: StatusLineOptions) {
  const { stream } = options;
  const tty = stream.isTTY === true;
  const now = options.now ?? Date.now;
  const counts = emptyCounts();
  let queued: number | undefined;
  let drawn = "";
  let last = "";
  let timer: NodeJS.Timeout | undefined;
  let reading: Promise<void> = Promise.resolve();
  const toWidth = (text: string) =>
    tty && stream.columns ? text.slice(0, Math.max(0, stream.columns - 1)) : text;
  const draw = () => {
    const text = toWidth(statusText(counts, queued, now()));
    if (tty) {
      stream.write(`\r\x1b[2K${text}`);
      drawn = text;
      return;
    }
    // Off a terminal: a line when something moved (not the clock alone), so an idle stack writes nothing.
    const moved = text.slice(text.indexOf("  "));
    if (moved === last) return;
    last = moved;
    stream.write(`${text}\n`);
  };
  const terminal: StatusTerminal = {
    beforeOutput: () => {
      if (tty && drawn) stream.write("\r\x1b[2K");
    },
    afterOutput: () => {
      if (tty && drawn) stream.write(`\r${drawn}`);
    },
  };
  return {
    terminal,
    count: (entry: LedgerEntry) => countOutcome(counts, entry),
    /** The apps the rollup's last run found silent (#52): drawn at the next refresh. */
    silent: (appIds: readonly string[]) => {
      counts.silent = [...appIds];
    },
    /** Reads the queue's depth (undefined while unreadable) and draws. */
    refresh(readQueued: () => Promise<number>): Promise<void> {
      reading = readQueued()
        .then(
          (depth) => {
            queued = depth;
          },
          () => {
            queued = undefined;
          },
        )
        .then(draw);
      return reading;
    },
    /** Draws now and every `everyMs` (`refresh`). */
    start(readQueued: () => Promise<number>) {
      void this.refresh(readQueued);
      timer = setInterval(() => void this.refresh(readQueued), options.everyMs ?? 5_000);
      timer.unref();
    },
    /** Stops drawing, leaving the last line on the screen (ended by a newline). */
    async stop() {
      if (timer) clearInterval(timer);
      await reading;
      if (tty && drawn) stream.write("\n");
      drawn = "";
    },
  };
}

export type StatusLine = ReturnType<typeof statusLine>;
