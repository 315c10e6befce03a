import { z } from "zod";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { daysInRange, headlineTotals } from "../../shared/analytics/rollup";
import type { StoredDay } from "../../shared/analytics/store/activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { projectionStores } from "../../shared/projector/stores";
import { triggerFormProblem } from "../../shared/stream/subscribers";
import { notComputedNotes } from "../analytics/activity-view/notes";
import { DEFAULT_GRACE_MINUTES } from "../analytics/activity-view/options";
import { activityView } from "../analytics/activity-view/view";
import { activityStoreFor, userSetsFor } from "../analytics/engines";
import { eventIdPrefix } from "../cli/event-id";
import { isoDate, UsageError, UserFacingError } from "../cli/program";
import type { FlowSnapshot } from "../local/flow";
import { stateDir } from "../local/state";
import { scanArchive } from "../ops/archive-scan";
import { resendById } from "../ops/inspect";
import { queueDepths } from "../ops/queues";
import { recentEvents } from "../ops/recent";
import { traceEvent } from "../ops/trace";
import { analyticsQueries } from "../query/queries";
import { outcomeStats } from "../query/stats";
import type { Target } from "../target";

/**
 * The console's JSON endpoints. Each answers one question with the function the CLI answers it
 * with (`query stats`, `events`, `query event`, `resend`, `query activity`, `query online`,
 * `query sessions`, `query recordings`), so the page and the terminal never disagree.
 */

/** Where the console reads: a target, and for the local stack its state directory and live flow. */
export interface ConsoleContext {
  target: Target;
  /** The local stack's state directory (its outcome counters); absent for a deployed stack. */
  stateDir?: string;
  /** The live flow of the last 15 minutes, for one app or all. */
  flow(app?: string): Promise<FlowSnapshot>;
  now?: () => number;
  /** The rollup's grace period: a day closes (its day sets are written) this long after its end. Default 120. */
  graceMinutes?: number;
}

/** An endpoint's answer: a status and a JSON body (`{ error }` for a 4xx). */
export interface ApiResponse {
  status: number;
  body: unknown;
}

/** A request the endpoint refuses, with the status to answer. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A calendar day, as the CLI takes it (`isoDate`). */
const day = z.string().refine((value) => {
  try {
    return isoDate(value) === value;
  } catch {
    return false;
  }
}, "expected a date YYYY-MM-DD");
const app = z.string().min(1).max(256);
/** A range of days: the earlier first, at most 366 days. */
function ordered<T extends { from: string; to: string }>(schema: z.ZodType<T>) {
  return schema
    .refine((q) => q.from <= q.to, "from is after to: give the earlier day first")
    .refine((q) => Date.parse(q.to) - Date.parse(q.from) <= 366 * 86_400_000, "a range of at most 366 days");
}
const schemas = {
  any: z.object({ app: app.optional() }),
  app: z.object({ app }),
  events: z.object({
    app: app.optional(),
    // One vocabulary with every command's --trigger: a name, a family (group:*) or a prefix (group_member_*).
    trigger: z
      .string()
      .max(64)
      .superRefine((form, ctx) => {
        const problem = triggerFormProblem(form);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
    limit: z.coerce.number().int().min(1).max(200).default(25),
  }),
  days: ordered(z.object({ from: day, to: day })),
  range: ordered(z.object({ app, from: day, to: day })),
  day: z.object({ app, day }),
  top: z.object({
    app,
    day,
    what: z.enum(["groups", "users"]),
    limit: z.coerce.number().int().min(1).max(25).default(10),
  }),
};

/** Where a listed event is (its app and receipt time, as the list gave them): its lookup reads that hour. */
const listedAt = z.object({ app: app.optional(), at: z.coerce.number().int().min(0).optional() });
function whereListed(params: URLSearchParams): { appId?: string; receivedAt?: number } {
  const { app: appId, at } = parse(listedAt, params);
  return { ...(appId ? { appId } : {}), ...(at === undefined ? {} : { receivedAt: at }) };
}

/** How many of the newest archive lines the console reads for apps no rollup pass has seen yet. */
const RECENT_LINES_FOR_APPS = 400;

/**
 * The apps the rollup's passes of the last week saw (the archive's keys do not name apps), and
 * those of the newest archive lines (an app whose first events arrived since the last pass): the
 * newest objects only, a GET or two per refresh.
 */
async function knownApps(target: Target): Promise<string[]> {
  if (!target.bucket) return [];
  const today = Date.now();
  const apps = new Set(
    await blobRollupLedger(s3BlobStore(target.s3, target.bucket)).apps(
      daysInRange(utcDay(today - 6 * 86_400_000), utcDay(today)),
    ),
  );
  let lines = 0;
  await scanArchive(target.s3, target.bucket, {}, "newest", (line) => {
    if (line.appId !== undefined) apps.add(line.appId);
    return ++lines >= RECENT_LINES_FOR_APPS ? "stop" : undefined;
  });
  return [...apps];
}

/** The query string's parameters, checked: a 400 naming the first problem. */
function parse<T extends z.ZodType>(schema: T, params: URLSearchParams): z.infer<T> {
  const result = schema.safeParse(Object.fromEntries(params));
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new ApiError(400, `${issue?.path.join(".") || "query"}: ${issue?.message ?? "invalid"}`);
}

/** An event id or prefix from the path, as the CLI takes it. */
function eventId(value: string): string {
  try {
    return eventIdPrefix(decodeURIComponent(value));
  } catch (error) {
    throw new ApiError(400, (error as Error).message);
  }
}

const DAY_MS = 86_400_000;

/**
 * The app the per-app views (Activity, Now) open on when none is chosen: the busiest over the
 * days given, by messages, then active users, then events counted at all (any figure), then by
 * name; an app with no computed day comes last. Undefined when there is no app.
 *
 * @example busiestApp([{ app: "a", days: [] }, { app: "b", days: [dayWith100Messages] }]) // "b"
 */
export function busiestApp(
  apps: ReadonlyArray<{ app: string; days: readonly StoredDay[] }>,
): string | undefined {
  return busiestOf(
    apps.map(({ app, days }) => {
      const totals = days
        .map(headlineTotals)
        .reduce((sum, t) => t.map((n, i) => n + (sum[i] ?? 0)), [0, 0, 0]);
      return { app, score: [...totals, days.length] };
    }),
  );
}

/**
 * `busiestApp` from the rollup ledger's per-app totals of the days (`RollupLedger.appTotals`: one
 * read a day, whatever the number of apps) rather than a query of each app's days: the same
 * ranking, as both sum the same `headlineTotals`.
 *
 * @example busiestFromTotals(new Map([["a", { totals: [3, 1, 9], days: 1 }], ["b", { totals: [5, 1, 9], days: 1 }]])) // "b"
 */
export function busiestFromTotals(
  apps: ReadonlyMap<string, { totals: readonly number[]; days: number }>,
): string | undefined {
  return busiestOf([...apps].map(([app, t]) => ({ app, score: [...t.totals, t.days] })));
}

/** The app with the highest score, compared item by item, then by name. */
function busiestOf(ranked: Array<{ app: string; score: number[] }>): string | undefined {
  ranked.sort((a, b) => {
    for (let i = 0; i < a.score.length; i++) {
      const d = (b.score[i] ?? 0) - (a.score[i] ?? 0);
      if (d !== 0) return d;
    }
    return a.app < b.app ? -1 : a.app > b.app ? 1 : 0;
  });
  return ranked[0]?.app;
}

/** `GET /api/now`: who is online, the sessions in progress, the recordings archived and failed. */
async function now(ctx: ConsoleContext, appId: string) {
  const q = analyticsQueries(documentClient(ctx.target.dynamo), ctx.target.tables);
  const t = ctx.now?.() ?? Date.now();
  const [online, recent, withRecordings] = await Promise.all([
    q.online(appId),
    q.sessionsBetween(appId, t - DAY_MS, t),
    q.recordings(appId),
  ]);
  const recordings = withRecordings.flatMap((s) =>
    Object.values(s.recordings ?? {}).map((r) => ({ sessionId: s.sessionId, ...r })),
  );
  const count = (status: string) => recordings.filter((r) => r.status === status).length;
  return {
    app: appId,
    online,
    // Started in the last 24 hours, neither ended nor refused (busy, rejected, …).
    inProgress: recent.filter((s) => s.endedAt === undefined && (s.outcome ?? "initiated") === "initiated"),
    recordings: {
      archived: count("archived"),
      failed: count("failed"),
      pending: count("pending"),
      list: recordings.sort((a, b) => b.startTime - a.startTime).slice(0, 50),
    },
  };
}

/**
 * What `query activity` needs to say when a day closes, and which stack the commands it suggests
 * reach: the same as the CLI's, from the console's context.
 */
function closing(ctx: ConsoleContext) {
  const { target, stateDir: dir } = ctx;
  return {
    now: ctx.now?.() ?? Date.now(),
    graceMinutes: ctx.graceMinutes ?? DEFAULT_GRACE_MINUTES,
    targetArgs:
      target.kind === "aws" && target.stackName
        ? ` --stack ${target.stackName}`
        : dir && dir !== stateDir()
          ? ` --state-dir ${dir}`
          : "",
  };
}

/** `query activity --hourly` or `--top` for one day: that day's entry, or null if not computed. */
async function oneDay(
  target: Target,
  o: { app: string; day: string; limit: number; hourly?: boolean; top?: "groups" | "users" },
): Promise<unknown> {
  const view = await activityView(activityStoreFor(target), { ...o, from: o.day, to: o.day });
  return (view.json as unknown[])[0] ?? null;
}

function bucketOf(ctx: ConsoleContext): string {
  if (!ctx.target.bucket) throw new ApiError(404, "the target has no data bucket");
  return ctx.target.bucket;
}

/**
 * Answers one API request. `path` is the URL's path (`/api/…`), `params` its query string.
 * Unknown paths are 404; a bad parameter is a 400 naming it; an event found nowhere is a 404.
 */
export async function handleApi(
  ctx: ConsoleContext,
  method: string,
  path: string,
  params: URLSearchParams,
): Promise<ApiResponse> {
  const { target } = ctx;
  const ok = (body: unknown): ApiResponse => ({ status: 200, body });
  const resend = /^\/api\/events\/([^/]+)\/resend$/.exec(path);
  if (resend?.[1]) {
    if (method !== "POST") throw new ApiError(405, "resend is a POST");
    if (!target.queues) throw new ApiError(404, "the target has no events queue");
    const { report, searched } = await resendById(
      target,
      { bucket: bucketOf(ctx), queueUrl: target.queues.events.url },
      eventId(resend[1]),
      whereListed(params),
    );
    if (!report)
      throw new ApiError(
        404,
        `the event is in neither the quarantine nor the raw archive (looked in ${searched})`,
      );
    return ok(report);
  }
  if (method !== "GET") throw new ApiError(405, `${method} is not allowed here: the console is read-only`);
  const story = /^\/api\/events\/([^/]+)$/.exec(path);
  if (story?.[1]) {
    const trace = await traceEvent(
      target,
      bucketOf(ctx),
      target.queues?.events.deadLetterUrl,
      projectionStores(target.dynamo, target.tables),
      eventId(story[1]),
      whereListed(params),
    );
    if (trace.key === undefined && trace.outcome !== "dead-lettered")
      throw new ApiError(404, `event ${trace.eventId} is in neither the archive, the quarantine nor the DLQ`);
    return ok(trace);
  }
  switch (path) {
    case "/api/overview": {
      const { app } = parse(schemas.any, params);
      const [apps, stats, queues] = await Promise.all([
        knownApps(target),
        outcomeStats(target, app, ctx.stateDir),
        target.queues ? queueDepths(target.sqs, target.queues) : undefined,
      ]);
      return ok({
        target: target.kind,
        stack: target.stackName,
        // Deployed, each refresh is billed (GetMetricData, SQS, S3 and DynamoDB requests) and the
        // metrics move a minute at a time: every 30 s; locally every 2 s.
        refreshSeconds: target.kind === "local" ? 2 : 30,
        apps: apps.sort(),
        stats,
        queues,
      });
    }
    case "/api/busiest": {
      // The rollup ledger's totals: one read a day of the range, whatever the number of apps.
      // Only when no pass of the range has totals (written before them, or no rollup yet): one
      // Query of the activity table per app, as before.
      const o = parse(schemas.days, params);
      const ledger = target.bucket ? blobRollupLedger(s3BlobStore(target.s3, target.bucket)) : undefined;
      const totals = (await ledger?.appTotals(daysInRange(o.from, o.to))) ?? new Map();
      if (totals.size > 0) return ok({ app: busiestFromTotals(totals) ?? null, withData: true });
      const store = activityStoreFor(target);
      const apps = await knownApps(target);
      const days = await Promise.all(
        apps.map(async (a) => ({ app: a, days: await store.days(a, o.from, o.to) })),
      );
      return ok({ app: busiestApp(days) ?? null, withData: days.some((d) => d.days.length > 0) });
    }
    case "/api/flow":
      return ok(await ctx.flow(parse(schemas.any, params).app));
    case "/api/events": {
      const o = parse(schemas.events, params);
      return ok(
        await recentEvents(target.s3, bucketOf(ctx), projectionStores(target.dynamo, target.tables), {
          appId: o.app,
          triggers: o.trigger ? [o.trigger] : undefined,
          limit: o.limit,
        }),
      );
    }
    case "/api/activity": {
      // The days, and for those not computed `query activity`'s notes: the rollup to run.
      const o = parse(schemas.range, params);
      const json = (await activityView(activityStoreFor(target), { ...o, limit: 10 })).json as {
        notComputed?: string[];
      };
      return ok({
        ...json,
        notComputedNotes: notComputedNotes(o.app, json.notComputed ?? [], closing(ctx).targetArgs),
      });
    }
    case "/api/activity/users": {
      const o = parse(schemas.range, params);
      return ok(
        (
          await activityView(
            activityStoreFor(target),
            { ...o, limit: 10, users: true, ...closing(ctx) },
            userSetsFor(target),
          )
        ).json,
      );
    }
    case "/api/activity/groups": {
      const o = parse(schemas.range, params);
      return ok(
        (
          await activityView(
            activityStoreFor(target),
            { ...o, limit: 10, groups: true, ...closing(ctx) },
            userSetsFor(target),
          )
        ).json,
      );
    }
    case "/api/activity/heatmap": {
      const o = parse(schemas.range, params);
      return ok((await activityView(activityStoreFor(target), { ...o, limit: 10, heatmap: true })).json);
    }
    case "/api/activity/hours": {
      const o = parse(schemas.day, params);
      return ok(await oneDay(target, { app: o.app, day: o.day, hourly: true, limit: 10 }));
    }
    case "/api/activity/top": {
      const o = parse(schemas.top, params);
      const found = await oneDay(target, { app: o.app, day: o.day, top: o.what, limit: o.limit });
      // A day not computed: the rollup to run, as `query activity` says it.
      return ok(found ?? { notComputed: notComputedNotes(o.app, [o.day], closing(ctx).targetArgs)[0] });
    }
    case "/api/now":
      return ok(await now(ctx, parse(schemas.app, params).app));
    default:
      throw new ApiError(404, `no such endpoint: ${path}`);
  }
}

/** The answer for an error: a 4xx for what the request got wrong, else a 500 with the message. */
export function errorResponse(error: unknown): ApiResponse {
  if (error instanceof ApiError) return { status: error.status, body: { error: error.message } };
  if (error instanceof UsageError) return { status: 400, body: { error: error.message } };
  if (error instanceof UserFacingError) return { status: 404, body: { error: error.message } };
  return { status: 500, body: { error: error instanceof Error ? error.message : String(error) } };
}
