import { Command, CommanderError, InvalidArgumentError } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import type { ActivityStore } from "../../shared/analytics/store/activity-store";
import { projectionStores } from "../../shared/projector/stores";
import { DEFAULT_GRACE_MINUTES } from "../analytics/activity-view/options";
import { activityView } from "../analytics/activity-view/view";
import { activityStoreFor, userSetsFor } from "../analytics/engines";
import { eventIdPrefix, shortId } from "../cli/event-id";
import {
  epochTime,
  isoTime,
  keyValueLines,
  TERMINAL_COLUMNS,
  tableLines,
  tableText,
  withIsoTimes,
} from "../cli/format";
import {
  exitCodeOf,
  expectedMessage,
  integer,
  oneOf,
  UsageError,
  UserFacingError,
  utcDayOption,
  VERSION,
} from "../cli/program";
import { localObjectFile, stateDir } from "../local/state";
import { listQuarantine, peekDeadLetters } from "../ops/inspect";
import { traceEvent } from "../ops/trace";
import { resolveTarget, TABLES_SPEC, type Target } from "../target";
import { assertAppDelivered } from "./known-apps";
import { type AnalyticsQueries, analyticsQueries } from "./queries";
import { outcomeStats } from "./stats";

/** Where the CLI writes: stdout for results, stderr for everything else. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** `ISO-8601` or epoch seconds → epoch ms. */
export function parseTime(value: string): number {
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new InvalidArgumentError("expected ISO-8601 or epoch seconds.");
  return ms;
}

const iso = isoTime;

type Row = Record<string, unknown>;

/** Locally, the file that holds an archived object (`file`), for a person to open. */
function withFile(target: Target, o: Record<string, unknown>, key: string | undefined): { file?: string } {
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
function itemLines(item: object): string[] {
  const first = ["appId", "guid", "uid", "sessionId", "name", "status"];
  const rank = (k: string) => (first.includes(k) ? first.indexOf(k) : first.length);
  return keyValueLines(
    Object.entries(withIsoTimes(item)).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)),
  );
}

/** A recording's archive status in a few words: archived where, or failed why. */
function recordingStatus(r: {
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

const sessionRow = (s: Awaited<ReturnType<AnalyticsQueries["sessionsBetween"]>>[number]) => ({
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

/**
 * The query CLI: every access pattern of the tables, readable or `--json` (one JSON value on
 * stdout, nothing else there). Exported for the tests; `tools/commands/query.ts` runs it.
 */
export async function runQueryCli(
  argv: string[],
  io: Io = { out: console.log, err: console.error },
): Promise<number> {
  const program = queryProgram(io);
  const outcome = { exitCode: 0 };
  const run = runner(program, io, outcome);
  addItemCommands(program, run);
  addSessionCommands(program, run);
  addArchiveCommands(program, run);
  addFigureCommands(program, run);
  const parsed = await parseQueryArgs(program, argv, io);
  return parsed ?? outcome.exitCode;
}

/** The root command and the options every query takes (where the tables are). */
function queryProgram(io: Io): Command {
  return new Command("query")
    .description("Query the projection tables (the local stack by default)")
    .option("--stack <name>", "a deployed stack's name (its outputs name the tables)")
    .option("--tables <spec>", `explicit table names: ${TABLES_SPEC}`)
    .option("--state-dir <dir>", "the local stack's state dir (env LOCAL_STATE_DIR)")
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
}

/** What a query's action returns: its JSON, its table rows or its lines, and whether it found anything. */
type QueryResult = { json: unknown; rows: Row[]; found?: boolean; lines?: string[] };
/** A query's action: what it reads through the queries or the target, given the options. */
type QueryAction = (q: AnalyticsQueries, o: Record<string, unknown>, target: Target) => Promise<QueryResult>;
/** Wraps a query's action as a command action (`runner`). */
type Run = (action: QueryAction) => (...args: unknown[]) => Promise<void>;

/**
 * The command action of a query: resolves the target, runs the query, prints its JSON, lines or
 * table, and sets exit code 3 when nothing was found (null, an empty list, an id found nowhere).
 */
function runner(program: Command, io: Io, outcome: { exitCode: number }): Run {
  return (action) =>
    async (...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      const o = { ...program.opts(), ...command.opts() } as Record<string, unknown>;
      const target = await resolveTarget({
        stack: o.stack as string,
        tables: o.tables as string,
        stateDir: o.stateDir as string,
      });
      try {
        const { json, rows, found, lines } = await action(
          analyticsQueries(documentClient(target.dynamo), target.tables),
          { ...o, args: command.processedArgs },
          target,
        );
        const nothing = !(found ?? (json !== null && !(Array.isArray(json) && json.length === 0)));
        // Found nothing: what the text says of it (the rollup to run, where it looked) is a note,
        // on stderr with the message below: stdout holds data only, empty for a pipe; exit code 3.
        const text = nothing ? io.err : io.out;
        if (o.json) io.out(JSON.stringify(json, null, 2));
        else if (lines) for (const line of lines) text(line);
        else for (const line of tableText(rows, { wide: Boolean(o.wide) })) text(line);
        if (nothing) {
          io.err(
            `nothing found: ${[command.name(), ...command.args].join(" ")}${o.app ? ` in app ${o.app}` : ""}`,
          );
          outcome.exitCode = 3;
        } else if (!o.json && !lines && rows.length === 0) io.out("(no results)");
      } finally {
        target.destroy();
      }
    };
}

/** The `--app` option, the first (or `i`-th) argument, and a command that takes both. */
const app = (o: Record<string, unknown>) => String(o.app);
const arg = (o: Record<string, unknown>, i = 0) => String((o.args as string[])[i]);
const withApp = (c: Command) =>
  c.requiredOption("--app <appId>", "the app").option("--json", "one JSON value on stdout");
/** `--wide`, for a command that prints a table: by default it fits `TERMINAL_COLUMNS` (`tableText`). */
const withWide = (c: Command) =>
  c.option("--wide", `every column, however wide (by default the table fits ${TERMINAL_COLUMNS} columns)`);

/**
 * A recording as a row, in the order a table that fits 100 columns keeps (`tableText`): the
 * session's id (66 characters on the platform), its status and time, then the rest; the widest
 * (the object's key, its local file) last, left out first.
 */
export function recordingRow(r: {
  sessionId: string;
  startTime: number;
  duration?: unknown;
  status: string;
  size?: number;
  failureReason?: string;
  key?: string;
  file?: string;
}): Row {
  return {
    sessionId: r.sessionId,
    status: r.status,
    startTime: iso(r.startTime * 1000),
    duration: r.duration,
    size: r.size,
    failureReason: r.failureReason,
    key: r.key,
    file: r.file,
  };
}

/** Groups, members, a user's groups, presence, who is online. */
function addItemCommands(program: Command, run: Run): void {
  withApp(program.command("group <guid>").description("a group's state")).action(
    run(async (q, o) => {
      const g = await q.group(app(o), arg(o));
      return {
        json: g ?? null,
        rows: [],
        lines: g ? itemLines(g) : [],
      };
    }),
  );
  withWide(
    withApp(
      program
        .command("members <guid>")
        .description("a group's current members")
        .option("--all", "former members too"),
    ),
  ).action(
    run(async (q, o) => {
      const m = await q.members(app(o), arg(o), { includeFormer: Boolean(o.all) });
      return {
        json: m,
        rows: m.map((x) => ({
          uid: x.uid,
          name: x.name,
          status: x.status,
          scope: x.scope,
          joinedAt: iso(x.joinedAt),
          by: x.by,
        })),
      };
    }),
  );
  withWide(
    withApp(
      program
        .command("groups-of <uid>")
        .description("the groups of a user")
        .option("--all", "former groups too"),
    ),
  ).action(
    run(async (q, o) => {
      const m = await q.groupsOf(app(o), arg(o), { includeFormer: Boolean(o.all) });
      return {
        json: m,
        rows: m.map((x) => ({ guid: x.guid, status: x.status, scope: x.scope, joinedAt: iso(x.joinedAt) })),
      };
    }),
  );
  withApp(program.command("presence <uid>").description("a user's presence")).action(
    run(async (q, o) => {
      const p = await q.presence(app(o), arg(o));
      return {
        json: p ?? null,
        rows: [],
        lines: p ? itemLines(p) : [],
      };
    }),
  );
  withWide(withApp(program.command("online").description("the users online now"))).action(
    run(async (q, o) => {
      const p = await q.online(app(o));
      return {
        json: p,
        rows: p.map((x) => ({ uid: x.uid, name: x.name, since: iso(x.since), platform: x.platform })),
      };
    }),
  );
}

/** A session, the sessions of a time range or of a user, the recordings. */
function addSessionCommands(program: Command, run: Run): void {
  withApp(
    program
      .command("session <sessionId>")
      .description("a call or meeting with its participants and recording"),
  ).action(
    run(async (q, o, target) => {
      const s = await q.session(app(o), arg(o));
      if (!s) return { json: null, rows: [] };
      const { participants, recordings, ...rest } = s;
      const lines = itemLines(rest);
      const recordingLines = keyValueLines(
        Object.values(recordings ?? {}).flatMap((r) => [
          [`recording ${epochTime(r.startTime)}`, recordingStatus(r)] as const,
          [`  file`, withFile(target, o, r.key).file] as const,
        ]),
      );
      const stints = Object.values(participants ?? {}).map((p) => ({
        participant: p.name,
        joinedAt: iso(p.joinedAt),
        leftAt: iso(p.leftAt),
        atEnd: p.atEnd ? "yes" : "",
      }));
      return { json: s, rows: [], lines: [...lines, ...recordingLines, "", ...tableLines(stints)] };
    }),
  );
  withWide(
    withApp(
      program
        .command("sessions")
        .description("the sessions in a time range")
        .requiredOption("--from <time>", "ISO-8601 or epoch seconds", parseTime)
        .requiredOption("--to <time>", "ISO-8601 or epoch seconds", parseTime)
        .hook("preAction", (command) => {
          const { from, to } = command.opts<{ from: number; to: number }>();
          if (from > to)
            throw new UsageError(`--from ${iso(from)} is after --to ${iso(to)}: give the earlier time first`);
        }),
    ),
  ).action(
    run(async (q, o) => {
      const s = await q.sessionsBetween(app(o), Number(o.from), Number(o.to));
      return { json: s, rows: s.map(sessionRow) };
    }),
  );
  withWide(
    withApp(program.command("sessions-of <uid>").description("the sessions a user initiated or received")),
  ).action(
    run(async (q, o) => {
      const s = await q.sessionsOf(app(o), arg(o));
      return { json: s, rows: s.map(sessionRow) };
    }),
  );
  withWide(
    withApp(program.command("recordings").description("the recordings, with their archive status")),
  ).action(
    run(async (q, o, target) => {
      const sessions = await q.recordings(app(o));
      const recordings = sessions.flatMap((s) =>
        Object.values(s.recordings ?? {}).map((r) => ({
          sessionId: s.sessionId,
          ...r,
          ...withFile(target, o, r.key),
        })),
      );
      return {
        json: recordings,
        rows: recordings.map(recordingRow),
      };
    }),
  );
}

/** What the archive and the queues hold: an event's trace, the quarantine, the dead letters. */
function addArchiveCommands(program: Command, run: Run): void {
  program
    .command("event")
    .description("where an event is and what it did: its outcome, and each item it touches")
    .argument("<eventId>", "its id, or a prefix of 12 or more hex characters", eventIdPrefix)
    .option("--app <appId>", "where to look (faster)")
    .option(
      "--date <day>",
      "its receipt day, YYYY-MM-DD, today or yesterday (faster, with --app)",
      utcDayOption(),
    )
    .option("--json", "one JSON value on stdout")
    .action(
      run(async (_q, o, target) => {
        if (!target.bucket) throw new UserFacingError("the target has no data bucket");
        const trace = await traceEvent(
          target,
          target.bucket,
          target.queues?.events.deadLetterUrl,
          projectionStores(target.dynamo, target.tables),
          arg(o),
          { appId: o.app as string | undefined, date: o.date as string | undefined },
        );
        const r = trace.recording;
        return {
          found: trace.key !== undefined || trace.outcome === "dead-lettered",
          json: trace,
          rows: [],
          lines: keyValueLines([
            ["event", shortId(trace.eventId)],
            ["trigger", trace.trigger],
            ["app", trace.appId],
            ["received", iso(trace.receivedAt)],
            ["outcome", trace.outcome],
            ["error", trace.error],
            ["note", trace.note],
            [
              "erased",
              trace.erasure &&
                `redacted by erasure ${trace.erasure}: the erased user is a pseudonym, free text removed`,
            ],
            ["object", trace.key],
            ["recording", r && recordingStatus(r)],
            ["file", withFile(target, o, r?.key).file],
            ...(trace.items ?? []).map(
              (i) =>
                ["touches", `${i.table} ${i.key.pk}${i.key.sk ? `/${i.key.sk}` : ""}: ${i.state}`] as const,
            ),
          ]),
        };
      }),
    );
  withWide(program.command("quarantine"))
    .description("the quarantined events, newest first, with why each was refused")
    .option("--app <appId>", "one app")
    .option("--date <day>", "one receipt day, YYYY-MM-DD, today or yesterday (with --app)", utcDayOption())
    .option("--json", "one JSON value on stdout")
    .action(
      run(async (_q, o, target) => {
        if (!target.bucket) throw new UserFacingError("the target has no data bucket");
        const events = await listQuarantine(target.s3, target.bucket, {
          appId: o.app as string | undefined,
          date: o.date as string | undefined,
        });
        return {
          json: events,
          rows: events.map((e) => ({
            eventId: shortId(e.eventId),
            trigger: e.trigger,
            appId: e.appId,
            receivedAt: iso(e.receivedAt),
            error: e.error,
          })),
        };
      }),
    );
  withWide(program.command("dlq"))
    .description("the dead-lettered messages, with their attributes and receive counts (not consumed)")
    .option("--queue <name>", "events or recordings", oneOf("events", "recordings"), "events")
    .option("--json", "one JSON value on stdout")
    .action(
      run(async (_q, o, target) => {
        const queue = target.queues?.[o.queue as "events" | "recordings"];
        if (!queue?.deadLetterUrl)
          throw new UserFacingError(`no ${String(o.queue)} dead-letter queue on this target`);
        const letters = await peekDeadLetters(target.sqs, queue.deadLetterUrl);
        return {
          json: letters,
          rows: letters.map((l) => ({
            messageId: l.messageId,
            receives: l.receiveCount,
            sentAt: iso(l.sentAt),
            trigger: l.attributes.trigger,
            appId: l.attributes.appId,
            eventId: l.attributes.eventId && shortId(l.attributes.eventId),
          })),
        };
      }),
    );
}

/** The activity figures and the counters. */
function addFigureCommands(program: Command, run: Run): void {
  withApp(
    program
      .command("activity")
      .description(
        "an app's activity figures per day, or per hour, or its top groups or users (the rollup's)",
      )
      .requiredOption("--from <date>", "first UTC day, YYYY-MM-DD (or today, yesterday)", utcDayOption())
      .requiredOption("--to <date>", "last UTC day, YYYY-MM-DD (or today, yesterday)", utcDayOption())
      .option("--hourly", "each day's hours")
      .option("--top <what>", "each day's busiest groups or users", oneOf("groups", "users"))
      .option("--calls", "the calls and meetings that ended: by duration, and participants per session")
      .option("--latency", "first-response, delivery and read times: counts and percentiles (seconds)")
      .option("--heatmap", "the most users online, and calls in progress, at once per weekday and hour")
      .option("--users", "DAU, WAU, MAU, stickiness and new users per day (closed days' user sets)")
      .option("--retention", "new users' D+1, D+7, D+30 retention, and weekly cohorts")
      .option(
        "--groups",
        "groups and members per day: joined, left, members at start and end, churn, average size",
      )
      .option("--limit <n>", "entries of a top list (at most 25)", integer(1, 25), 10)
      .option("--wide", `every figure, however wide (by default the text fits ${TERMINAL_COLUMNS} columns)`)
      .option(
        "--grace-minutes <minutes>",
        "when a day closes: its end plus this (the rollup's grace period)",
        integer(0, 1440),
        DEFAULT_GRACE_MINUTES,
      ),
  ).action(
    run(async (_q, o, target) => {
      if (String(o.from) > String(o.to))
        throw new UsageError(
          `--from ${String(o.from)} is after --to ${String(o.to)}: give the earlier day first`,
        );
      // An app without a stored day here may never have delivered: then say so (exit 3), not "not computed".
      const store = activityStoreFor(target);
      let daysFound = 0;
      let daysRead = false;
      const watched: ActivityStore = {
        ...store,
        days: async (...args) => {
          daysRead = true;
          const days = await store.days(...args);
          daysFound += days.length;
          return days;
        },
      };
      const view = await activityView(
        watched,
        {
          app: app(o),
          from: String(o.from),
          to: String(o.to),
          hourly: Boolean(o.hourly),
          top: o.top as "groups" | "users" | undefined,
          calls: Boolean(o.calls),
          latency: Boolean(o.latency),
          heatmap: Boolean(o.heatmap),
          users: Boolean(o.users),
          retention: Boolean(o.retention),
          groups: Boolean(o.groups),
          limit: Number(o.limit),
          wide: Boolean(o.wide),
          graceMinutes: Number(o.graceMinutes),
          targetArgs: o.stack
            ? ` --stack ${String(o.stack)}`
            : o.stateDir
              ? ` --state-dir ${String(o.stateDir)}`
              : "",
        },
        o.users || o.retention || o.groups ? userSetsFor(target) : undefined,
      );
      if (!daysRead || daysFound === 0)
        await assertAppDelivered(target, app(o), o.stateDir as string | undefined);
      return view;
    }),
  );
  withWide(program.command("stats"))
    .description("item counts and projector/recorder outcome counts")
    .option("--app <appId>", "one app")
    .option("--json", "one JSON value on stdout")
    .action(
      run(async (_q, o, target) => {
        const s = await outcomeStats(target, o.app as string | undefined, o.stateDir as string | undefined);
        const rows: Row[] = [
          ...Object.entries(s.items).map(([what, n]) => ({ what: `items: ${what}`, count: n })),
          ...Object.entries(s.outcomes).flatMap(([service, counts]) =>
            Object.entries(counts).map(([outcome, n]) => ({ what: `${service}: ${outcome}`, count: n })),
          ),
        ];
        return { json: s, rows };
      }),
    );
}

/**
 * Parses and runs the command line: undefined when the command ran (its exit code is the
 * runner's), else the exit code of a usage error (2; 0 for --help and --version) or a failure (1).
 */
async function parseQueryArgs(program: Command, argv: string[], io: Io): Promise<number | undefined> {
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    // Usage errors (unknown option, bad value, missing argument): 2; --help and --version: 0.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    io.err(`error: ${expectedMessage(error)}`);
    return exitCodeOf(error);
  }
  return undefined;
}
