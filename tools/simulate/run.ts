import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { basicAuthorization } from "../../shared/ingest/credentials";
import { UserFacingError } from "../cli/program";
import { emulatorClients } from "../local/clients";
import type { LocalStackInfo } from "../local/state";
import { queueDepth } from "../ops/queues";
import { analyticsQueries } from "../query/queries";
import { rollupAndCheckActivity, rollupHistory } from "./activity-check";
import { checkTables } from "./check";
import { type FileServer, startFileServer } from "./file-server";
import { deliveryPlan, type GeneratedEvent, type GeneratedHistory, generateHistory } from "./generator";
import { type PlatformApi, startPlatformApi } from "./platform-api";

export interface SimulationOptions {
  url: string;
  username: string;
  password: string;
  events: number;
  /** Deliveries per second. */
  rate: number;
  concurrency: number;
  seed: number;
  apps: string[];
  /** Epoch seconds of the history's first event (the generator's default: a fixed day in 2025). */
  startAt?: number;
  /** Seconds between two actions are multiplied by this (`--days`: a history over days). */
  pace?: number;
  /**
   * Store each delivery as the ingest would have at its receipt (`--days`): its receipt time, one
   * second after its event's (later than every delivery before it), instead of posting it now;
   * resolves to the status a webhook would have answered (200 stored, 0 not). With `stack`, the
   * history's days are rolled up after the check, over every app.
   */
  storeAt?: (delivery: GeneratedEvent, receivedAt: number) => Promise<number>;
  /** With `stack`: recompute the history's days and check the activity table too (#20). */
  activity?: boolean;
  duplicateShare: number;
  reorderShare: number;
  /** The running local stack: enables the settle wait and the table check. */
  stack?: LocalStackInfo;
  /** Port of the recordings file server (0: any; a replayed history needs the port it was made with). */
  filesPort?: number;
  /** Seconds to wait for the queues to drain. */
  settleTimeoutSeconds: number;
  onProgress?: (sent: number, total: number) => void;
  /** Stops the deliveries (Ctrl-C): the report then covers what was sent, without drain or check. */
  signal?: AbortSignal;
  /** Share of the presence events not delivered: a stretch in the middle (a receiver that was down). */
  dropPresence?: number;
  /** Stop this app's traffic half-way through its deliveries (#52: the platform stops sending). */
  stopApp?: string;
  /**
   * Apps the table check leaves out: their traffic cut half-way (`stopApp`, `--disable-webhook`),
   * their end state is not the history's.
   */
  uncheckedApps?: readonly string[];
  /** Serve the platform's `GET /v3/users` for the apps (on this port, 0 for any): see `report.platform`. */
  platformPort?: number;
  /** Send nothing: only wait for the queues and check the tables against the history. */
  checkOnly?: boolean;
  /** Called while waiting for the queues to drain: messages left and seconds waited. */
  onDrain?: (depth: number, seconds: number) => void;
  /** Write the generated history (events and delivery order) here. */
  out?: string;
  /** Replay a history written by --out instead of generating one. */
  replay?: GeneratedHistory & { plan: GeneratedEvent[] };
  /**
   * Where the platform sends an app's event, as its management API holds the webhooks (the
   * simulator's, `deliveriesFor`): each enabled webhook subscribed to the trigger, with that
   * webhook's credential; none: not sent (counted as `unsubscribed`). Absent: every event to `url`
   * with `username` and `password`, as before.
   */
  webhooks?: (
    appId: string,
    trigger: string,
  ) => ReadonlyArray<{ webhookURL: string; username: string; password: string }>;
}

export interface SimulationReport {
  sent: number;
  byStatus: Record<string, number>;
  byTrigger: Record<string, number>;
  seconds: number;
  deliveriesPerSecond: number;
  /** From the last 200 to both queues empty, seconds (local stack only). */
  drainSeconds?: number;
  problems?: string[];
  /** The history that was delivered (or, if interrupted, a prefix of it was). */
  history: GeneratedHistory;
  /** The deliveries were stopped before the end. */
  interrupted: boolean;
  /** Deliveries left out (`dropPresence`, `stopApp`). */
  dropped: number;
  /** Deliveries acknowledged that name a recording on this simulator's file server. */
  recordingsSent?: number;
  /** The simulated platform's API, still serving: the caller closes it. */
  platform?: PlatformApi;
  /** The local stack stopped answering after the deliveries (why): nothing was drained or checked. */
  stackGone?: string;
  /** The apps the check left out (`uncheckedApps`). */
  unchecked?: string[];
  /** The days rolled up after the check (`storeAt`), first and last. */
  rolledUp?: { from: string; to: string };
}

/** The socket errors of an emulator that is no longer there (the local stack stopped). */
const GONE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "EHOSTUNREACH"]);

/** Why the stack is gone, if this error says it is (a socket error, possibly as the cause). */
function stackGoneReason(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && GONE_CODES.has(code)) return (e as Error).message || code;
  }
  return undefined;
}

/** The plan without a stretch of `share` of its presence events, from the middle. */
function dropPresenceStretch(plan: GeneratedEvent[], share: number): GeneratedEvent[] {
  const presence = plan.flatMap((e, i) => (e.trigger === "user_connection_status_changed" ? [i] : []));
  const count = Math.round(presence.length * share);
  const start = Math.floor((presence.length - count) / 2);
  const dropped = new Set(presence.slice(start, start + count));
  return plan.filter((_, i) => !dropped.has(i));
}

/**
 * The plan once the platform stops sending one app's events half-way (#52, `--stop-app`): the
 * app's deliveries from the middle of its own on are left out, the other apps' are all sent.
 *
 * @example stopAppHalfway(plan, "sim-s7-a2").length // plan.length - half of sim-s7-a2's deliveries
 */
export function stopAppHalfway(plan: GeneratedEvent[], appId: string): GeneratedEvent[] {
  const own = plan.flatMap((e, i) => (e.appId === appId ? [i] : []));
  const from = own[Math.ceil(own.length / 2)] ?? plan.length;
  return plan.filter((e, i) => e.appId !== appId || i < from);
}

/**
 * The receipt time of each delivery of a plan stored as received then (`storeAt`): a second after
 * its event's time, and after every delivery before it (strictly: the order of receipt is the
 * plan's, as a webhook receives them one after another).
 *
 * @example receiptTimes([{ at: 1000 }, { at: 500 }]) // [2000, 2001]
 */
export function receiptTimes(plan: ReadonlyArray<Pick<GeneratedEvent, "at">>): number[] {
  let last = Number.NEGATIVE_INFINITY;
  return plan.map((e) => {
    last = Math.max(Math.ceil(e.at) + 1000, last + 1);
    return last;
  });
}

/** Sends one delivery; returns the HTTP status (0 for a network failure). */
async function deliver(url: string, authorization: string, body: string): Promise<number> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body,
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

/** Waits until both queues are empty twice in a row; returns the seconds it took. */
export async function waitForDrain(
  stack: LocalStackInfo,
  timeoutSeconds: number,
  onDepth?: (depth: number, seconds: number) => void,
): Promise<number> {
  const { sqs } = emulatorClients(stack.endpoints);
  const started = performance.now();
  let emptyInARow = 0;
  try {
    while (emptyInARow < 2) {
      if ((performance.now() - started) / 1000 > timeoutSeconds)
        throw new Error(`queues not drained after ${timeoutSeconds} s`);
      const depth =
        (await queueDepth(sqs, stack.queues.events.url)) +
        (await queueDepth(sqs, stack.queues.recordings.url));
      emptyInARow = depth === 0 ? emptyInARow + 1 : 0;
      onDepth?.(depth, (performance.now() - started) / 1000);
      await new Promise((r) => setTimeout(r, 200));
    }
    return (performance.now() - started) / 1000;
  } finally {
    sqs.destroy();
  }
}

/** Waits for the local stack's queues to drain, then checks its tables (and activity) against the history. */
async function settleAndCheck(report: SimulationReport, stack: LocalStackInfo, options: SimulationOptions) {
  report.drainSeconds = await waitForDrain(stack, options.settleTimeoutSeconds, options.onDrain);
  const { dynamo } = emulatorClients(stack.endpoints);
  // An app cut half-way has no known end state: the check leaves it out, and says so.
  const left = new Set(options.uncheckedApps ?? []);
  const checked = left.size
    ? { ...report.history, expected: new Map([...report.history.expected].filter(([app]) => !left.has(app))) }
    : report.history;
  if (left.size) report.unchecked = [...left];
  try {
    report.problems = await checkTables(checked, analyticsQueries(documentClient(dynamo), stack.tables));
  } finally {
    dynamo.destroy();
  }
  if (options.activity) report.problems.push(...(await rollupAndCheckActivity(stack, checked)));
  else if (options.storeAt) report.rolledUp = await rollupHistory(stack, report.history);
}

/**
 * Plays the platform against a webhook URL: generates (or replays) a history, serves its
 * recordings from a local file server, delivers it at `rate` with `concurrency` requests in
 * flight, then — against the local stack — waits for the pipeline to settle and checks the tables.
 * If the stack stops answering meanwhile, the report says so (`stackGone`) rather than failing.
 */
export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  let files: FileServer | undefined;
  try {
    files = await startFileServer({ port: options.filesPort ?? 0 }).catch((error: NodeJS.ErrnoException) => {
      // Another simulation still running holds it: say so in one line, not with a stack trace.
      if (error.code !== "EADDRINUSE") throw error;
      throw new UserFacingError(
        `port ${options.filesPort} is already in use: the simulator serves the history's recordings there (another simulation still running?); let it end, or give this one --files-port <port>`,
      );
    });
    const history: GeneratedHistory =
      options.replay ??
      generateHistory({
        events: options.events,
        seed: options.seed,
        apps: options.apps,
        recordingBaseUrl: files.url,
        ...(options.startAt === undefined ? {} : { startAt: options.startAt }),
        ...(options.pace === undefined ? {} : { pace: options.pace }),
      });
    const fullPlan =
      options.replay?.plan ??
      deliveryPlan(history.events, {
        seed: options.seed,
        duplicateShare: options.duplicateShare,
        reorderShare: options.reorderShare,
      });
    const kept = options.dropPresence ? dropPresenceStretch(fullPlan, options.dropPresence) : fullPlan;
    const plan = options.stopApp ? stopAppHalfway(kept, options.stopApp) : kept;
    const platform =
      options.platformPort === undefined
        ? undefined
        : await startPlatformApi(history.expected, { port: options.platformPort });
    if (options.out) {
      writeFileSync(
        options.out,
        JSON.stringify({
          events: history.events,
          plan,
          expected: [...history.expected].map(([app, e]) => [
            app,
            {
              ...e,
              groups: [...e.groups].map(([g, v]) => [g, { ...v, members: [...v.members] }]),
              online: [...e.online],
              sessions: [...e.sessions],
            },
          ]),
        }),
      );
    }
    const authorization = basicAuthorization(options.username, options.password);
    const receipts = options.storeAt ? receiptTimes(plan) : [];
    const byStatus: Record<string, number> = {};
    const byTrigger: Record<string, number> = {};
    const interval = 1000 / options.rate;
    const started = performance.now();
    let next = 0;
    let sent = 0;
    let recordingsSent = 0;
    // The last delivery about each item: the next one about it waits for its answer, so that the
    // edge receives them in the order they were sent (concurrent requests may overtake each other).
    const lastAbout = new Map<string, Promise<unknown>>();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        for (;;) {
          if (options.signal?.aborted) return;
          if (options.checkOnly) return;
          const index = next++;
          const delivery = plan[index];
          if (!delivery) return;
          const previous = delivery.item ? lastAbout.get(delivery.item) : undefined;
          const answered = (async () => {
            const due = started + index * interval;
            const wait = due - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            await previous;
            if (options.storeAt) return options.storeAt(delivery, receipts[index] ?? Date.now());
            if (!options.webhooks) return deliver(options.url, authorization, delivery.body);
            const targets = options.webhooks(delivery.appId, delivery.trigger);
            if (targets.length === 0) return "unsubscribed";
            const statuses = await Promise.all(
              targets.map((t) =>
                deliver(t.webhookURL, basicAuthorization(t.username, t.password), delivery.body),
              ),
            );
            // Several webhooks: the worst answer counts (a refusal by any of them shows).
            return statuses.find((st) => st !== 200) ?? 200;
          })();
          if (delivery.item) lastAbout.set(delivery.item, answered);
          const status = await answered;
          byStatus[status] = (byStatus[status] ?? 0) + 1;
          if (status === 200 && delivery.recording) recordingsSent++;
          byTrigger[delivery.trigger] = (byTrigger[delivery.trigger] ?? 0) + 1;
          sent++;
          options.onProgress?.(sent, plan.length);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const report: SimulationReport = {
      sent,
      byStatus,
      byTrigger,
      seconds,
      deliveriesPerSecond: sent / seconds,
      history,
      interrupted: Boolean(options.signal?.aborted),
      dropped: fullPlan.length - plan.length,
      recordingsSent,
      ...(platform ? { platform } : {}),
    };
    if (options.stack && !report.interrupted) {
      try {
        await settleAndCheck(report, options.stack, options);
      } catch (error) {
        // The stack stopped mid-run: the report still says what was sent and acknowledged.
        const reason = stackGoneReason(error);
        if (reason === undefined) throw error;
        report.stackGone = reason;
      }
    }
    return report;
  } finally {
    await files?.close();
  }
}
