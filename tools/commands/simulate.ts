/**
 * `npm run simulate`: realistic, seeded platform traffic against the webhook, then a check of the
 * tables. Defaults come from the running local stack (`LOCAL_STATE_DIR/stack.json`).
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";
import { SingleBar } from "cli-progress";
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { connectApps } from "../../shared/apps/connect";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { wrapLine } from "../cli/format";
import { decimal, integer, runProgram, UsageError, UserFacingError } from "../cli/program";
import { emulatorClients } from "../local/clients";
import { type LocalStackInfo, readStackInfo, readStats, stateDir, updateStackInfo } from "../local/state";
import { MANAGEMENT_ENV, resolveDeployment } from "../ops/app-connection";
import { resendEvent } from "../ops/inspect";
import { type GeneratedEvent, type GeneratedHistory, generateHistory } from "../simulate/generator";
import {
  activityHint,
  ENDS_BEFORE_NOW_SECONDS,
  historyDays,
  historyStartAt,
  parseHistoryStart,
} from "../simulate/history-start";
import { startManagementApi } from "../simulate/management-api";
import { simulatedApiKey } from "../simulate/platform-api";
import { runSimulation, type SimulationReport } from "../simulate/run";
import { chooseSeed, DEFAULT_SEED, runApp } from "../simulate/seed-choice";
import { summaryLines } from "../simulate/summary";

interface SimulateOptions {
  /** Whether `--seed` was typed (else it is the default, which a run may move past: seed-choice.ts). */
  seedGiven?: boolean;
  connect?: boolean;
  managementPort?: number;
  url?: string;
  username?: string;
  password?: string;
  events: number;
  rate: number;
  concurrency: number;
  seed: number;
  apps?: string;
  duplicates: number;
  reorder: number;
  filesPort: number;
  out?: string;
  replay?: string;
  check: boolean;
  checkOnly?: boolean;
  settleTimeout: number;
  stateDir?: string;
  dropPresence: number;
  stopApp?: string;
  disableWebhook?: string;
  platformPort?: number;
  servePlatform?: boolean;
  activity?: boolean;
  start?: number;
  days?: number;
}

/** A history written by `--out`, its maps and sets restored. */
function readHistory(file: string): GeneratedHistory & { plan: GeneratedEvent[] } {
  const raw = JSON.parse(readFileSync(file, "utf8"));
  const expected = new Map(
    raw.expected.map(([app, e]: [string, Record<string, unknown>]) => [
      app,
      {
        groups: new Map(
          (e.groups as Array<[string, { members: Array<[string, string]> }]>).map(([g, v]) => [
            g,
            { ...v, members: new Map(v.members) },
          ]),
        ),
        online: new Set(e.online as string[]),
        sessions: new Map(e.sessions as Array<[string, unknown]>),
      },
    ]),
  );
  return { events: raw.events, expected, plan: raw.plan } as GeneratedHistory & { plan: GeneratedEvent[] };
}

function summary(report: SimulationReport, rate: number, checkOnly: boolean): number {
  const { lines, warnings, code } = summaryLines(report, rate, checkOnly);
  for (const line of lines) console.log(line);
  for (const warning of warnings) console.warn(warning);
  return code;
}

/** The offset of a history's last event from its first, seconds: the same for any start. */
function spanSeconds(events: number, seed: number, apps: string[], pace?: number): number {
  const probe = generateHistory({ events, seed, apps, startAt: 0, ...(pace ? { pace } : {}) });
  return probe.events.reduce((latest, e) => Math.max(latest, e.at), 0) / 1000;
}

/**
 * `--days`: the pace that spreads the history over the last `days` days (ending a minute ago, as
 * any default history does), so that each app's usual hours are there to judge it by.
 */
function paceOverDays(days: number, events: number, seed: number, apps: string[]): number {
  // Whole seconds: the payloads' times are epoch seconds.
  const span = Math.max(1, spanSeconds(events, seed, apps));
  return Math.max(1, Math.floor((days * 86_400 - 2 * ENDS_BEFORE_NOW_SECONDS) / span));
}

async function simulate(o: SimulateOptions): Promise<void> {
  let stack: LocalStackInfo | undefined;
  try {
    stack = readStackInfo(stateDir(o.stateDir));
  } catch (error) {
    if (!o.url) throw new UserFacingError((error as Error).message);
  }
  const given = o.apps
    ?.split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  if (given?.length === 0) throw new UserFacingError("--apps needs at least one app id");
  // The stack's own counters say which apps already hold events (a stack elsewhere: none known).
  const counted = stack && (!o.url || o.url === stack.webhookUrl) ? readStats(stateDir(o.stateDir)).apps : {};
  const choice = chooseSeed({
    seed: o.seed,
    seedGiven: Boolean(o.seedGiven),
    apps: given,
    checkOnly: Boolean(o.checkOnly || o.replay),
    hasEvents: (app) => Object.keys(counted[app] ?? {}).length > 0,
  });
  const { apps, seed } = choice;
  if (choice.note) for (const line of wrapLine(choice.note)) console.log(line);
  console.log(`apps: ${apps.join(", ")}  (query them with --app <id>)`);
  // The console's per-app views open on the first app simulated here (docs/console.md).
  if (stack && (!o.url || o.url === stack.webhookUrl))
    updateStackInfo(stateDir(o.stateDir), { simulatedApps: apps });

  const bar = new SingleBar({
    format: "delivering [{bar}] {value}/{total} {percentage}% | {eta}s left",
    stream: process.stderr,
    hideCursor: true,
  });
  // Ctrl-C stops the deliveries; the summary covers what was sent and the cursor comes back.
  const abort = new AbortController();
  const interrupt = () => abort.abort();
  process.once("SIGINT", interrupt);
  let started = false;
  let lastDrainLine = -1;
  if (o.disableWebhook && !o.connect)
    throw new UserFacingError("--disable-webhook needs --connect (the platform's stand-in)");
  for (const key of ["stopApp", "disableWebhook"] as const) {
    const named = o[key];
    if (named === undefined) continue;
    const app = runApp(named, apps);
    if (!app)
      throw new UserFacingError(
        `${named} is not one of this run's apps (${apps.join(", ")}): name one by its id or its end (a2)`,
      );
    o[key] = app;
  }
  if (o.days !== undefined && (o.start !== undefined || o.url || o.replay || o.checkOnly || o.connect))
    throw new UsageError(
      "--days stores the history on the local stack as received over those days: not with --start, --url, --replay, --check-only or --connect",
    );
  if (o.days !== undefined && !stack) throw new UserFacingError("--days needs the local stack (npm start)");
  const pace = o.days === undefined ? undefined : paceOverDays(o.days, o.events, seed, apps);
  const backfill = o.days === undefined || !stack ? undefined : storedAsReceived(stack);
  const platform = o.connect ? await connectedPlatform(apps, o) : undefined;
  // Half of the app's deliveries go out before its webhook is disabled.
  const disableCount = { seen: 0, at: Math.max(1, Math.floor(o.events / apps.length / 2)) };
  try {
    const report = await runSimulation({
      ...(platform
        ? {
            webhooks: (app: string, trigger: string) => {
              // --disable-webhook: the platform's side disables the app's webhook half-way (#52).
              if (app === o.disableWebhook && ++disableCount.seen === disableCount.at)
                for (const hook of platform.server.apps.get(app)?.webhooks.values() ?? [])
                  hook.enabled = false;
              return platform.server.deliveriesFor(app, trigger);
            },
          }
        : {}),
      url: o.url ?? stack?.webhookUrl ?? "",
      username: o.username ?? stack?.credentials.username ?? "",
      password: o.password ?? stack?.credentials.password ?? "",
      events: o.events,
      rate: o.rate,
      concurrency: o.concurrency,
      seed,
      apps,
      // Activity figures are recomputed per UTC day and the console shows the last 7: unless
      // --start says otherwise, the history ends a minute ago.
      startAt: historyStartAt({
        start: o.start,
        spanSeconds: o.start === undefined ? spanSeconds(o.events, seed, apps, pace) : 0,
        nowMs: Date.now(),
      }),
      ...(pace === undefined ? {} : { pace }),
      ...(backfill ? { storeAt: backfill.store } : {}),
      ...(o.activity ? { activity: true } : {}),
      duplicateShare: o.duplicates,
      reorderShare: o.reorder,
      stack: o.check && (!o.url || o.url === stack?.webhookUrl) ? stack : undefined,
      settleTimeoutSeconds: o.settleTimeout,
      filesPort: o.filesPort,
      out: o.out,
      replay: o.replay ? readHistory(o.replay) : undefined,
      signal: abort.signal,
      checkOnly: o.checkOnly,
      onDrain(depth, seconds) {
        // A progress line on stderr: rewritten in place in a terminal, else every few seconds.
        if (process.stderr.isTTY)
          process.stderr.write(
            `\r\x1b[Kwaiting for the queues to drain: ${depth} message(s) left, ${seconds.toFixed(0)} s`,
          );
        else if (Math.floor(seconds / 5) !== Math.floor(lastDrainLine / 5) || lastDrainLine < 0)
          process.stderr.write(
            `waiting for the queues to drain: ${depth} message(s) left, ${seconds.toFixed(0)} s\n`,
          );
        lastDrainLine = seconds;
      },
      dropPresence: o.dropPresence,
      ...(o.stopApp ? { stopApp: o.stopApp } : {}),
      uncheckedApps: [o.stopApp, o.disableWebhook].flatMap((a) => (a ? [a] : [])),
      platformPort: o.servePlatform ? (o.platformPort ?? 0) : undefined,
      onProgress(sent, total) {
        if (!started) {
          bar.start(total, 0);
          started = true;
        }
        bar.update(sent);
      },
    });
    bar.stop();
    backfill?.destroy();
    if (lastDrainLine >= 0 && process.stderr.isTTY) process.stderr.write("\n");
    process.exitCode = summary(report, o.rate, Boolean(o.checkOnly));
    if (report.dropped && o.dropPresence)
      console.log(`${report.dropped} presence events were not delivered (--drop-presence)`);
    for (const line of stoppedAppLines(o, report)) console.log(line);
    const days = historyDays(report.history.events.map((e) => e.at));
    if (days && !o.activity && !o.checkOnly && !report.interrupted && !o.url && !report.rolledUp) {
      console.log("");
      for (const line of activityHint(apps, days, Date.now())) console.log(line);
    }
    if (report.platform) {
      const { platform } = report;
      console.log("\nThe simulated platform's API serves GET /v3/users until Ctrl-C. Reconcile with:");
      for (const app of apps)
        console.log(
          `  npm run reconcile -- --app ${app} --platform-url ${platform.baseUrl(app)} --api-key ${simulatedApiKey(app)}`,
        );
      const importKeys = Object.fromEntries(
        apps.map((app) => [app, { url: platform.importUrl(app), apiKey: simulatedApiKey(app) }]),
      );
      // The simulator's own keys (not secrets); a real key belongs in a file, not a command line.
      console.log("It takes the data import too (POST /v3.0/data_import/users). Import users with:");
      console.log(`export IMPORT_API_KEYS='${JSON.stringify(importKeys)}'`);
      console.log(`  npx webhook import users <file> --app ${apps[0]}`);
      process.off("SIGINT", interrupt);
      await new Promise<void>((resolve) => process.once("SIGINT", () => resolve()));
      await platform.close();
    }
  } finally {
    bar.stop();
    process.off("SIGINT", interrupt);
    if (platform) {
      await platform.server.close();
      console.log("management API stopped: the environment printed above no longer connects");
    }
  }
}

/**
 * What a run says of the app it stopped (`--stop-app`) or whose webhook it disabled
 * (`--disable-webhook`): left out of the check, and when the watchdog sees it.
 */
function stoppedAppLines(o: SimulateOptions, report: SimulationReport): string[] {
  const lines: string[] = [];
  if (o.stopApp) {
    lines.push(`${o.stopApp}: its traffic stopped half-way (--stop-app); the check leaves it out.`);
    lines.push(
      report.rolledUp
        ? `  Its days are rolled up (${report.rolledUp.from} to ${report.rolledUp.to}): npx webhook apps --silent lists it now`
        : "  Judged silent once the rollup's ledger holds days of its history: simulate --days 8 writes them",
    );
  }
  if (o.disableWebhook)
    lines.push(
      `${o.disableWebhook}: its webhook disabled half-way on the platform's side (--disable-webhook), its`,
      "  deliveries since then not sent (unsubscribed); the check leaves it out. npx webhook apps",
      "  --check, run against the management API above while a simulation serves it, finds it disabled",
    );
  return lines;
}

/**
 * The deliveries of `--days` stored as the ingest stores a webhook's (`resendEvent`: its
 * attributes, through S3 when SQS cannot take it), on the local stack's events queue, as received
 * at their time: a webhook would stamp them now.
 */
function storedAsReceived(stack: LocalStackInfo) {
  const { sqs, s3, destroy } = emulatorClients(stack.endpoints);
  return {
    destroy,
    store: async (delivery: GeneratedEvent, receivedAt: number) => {
      const { body, trigger, appId } = delivery;
      const eventId = createHash("sha256").update(body).digest("hex");
      try {
        await resendEvent(sqs, s3, stack.bucket, stack.queues.events.url, {
          body,
          trigger,
          appId,
          receivedAt,
          eventId,
        });
        return 200;
      } catch {
        return 0;
      }
    },
  };
}

/**
 * `--connect`: the simulator's management API for the apps (key and secret from
 * PLATFORM_MANAGEMENT_KEY/SECRET, or made up and printed), every app connected to the local
 * stack through it as `connect` does, and how to point `rotate-credentials` at it.
 */
async function connectedPlatform(apps: readonly string[], o: SimulateOptions) {
  const key = process.env[MANAGEMENT_ENV.key] ?? `sim-key-${randomBytes(6).toString("hex")}`;
  const secret = process.env[MANAGEMENT_ENV.secret] ?? `sim-secret-${randomBytes(12).toString("hex")}`;
  const server = await startManagementApi({
    key,
    secret,
    appIds: apps,
    allowHttp: true,
    port: o.managementPort,
  });
  process.env[MANAGEMENT_ENV.url] = server.url;
  process.env[MANAGEMENT_ENV.key] = key;
  process.env[MANAGEMENT_ENV.secret] = secret;
  const deployment = await resolveDeployment({ stateDir: o.stateDir });
  try {
    const suffix = deployment.name.replace(/[^A-Za-z0-9-]/g, "-").slice(0, 30);
    const report = await connectApps({
      api: managementApi(await deployment.management()),
      registry: dynamoAppRegistry(documentClient(deployment.dynamo), deployment.appsTable),
      appIds: apps,
      desired: {
        id: `webhook-backend-${suffix}`,
        name: `Webhook backend ${suffix}`,
        url: deployment.webhookUrl,
        ...deployment.credential,
        triggers: [...KNOWN_TRIGGERS].sort(),
      },
    });
    const failed = report.apps.filter((a) => a.error);
    if (failed.length) throw new UserFacingError(`${failed.length} apps not connected: ${failed[0]?.error}`);
  } finally {
    deployment.destroy();
  }
  // The double lives as long as this process: the environment printed is for the traffic's time.
  const connected = `${apps.length} app${apps.length === 1 ? "" : "s"} connected`;
  console.log(
    `management API: ${server.url} (up while this simulation runs, stopped when it ends); ${connected}. To rotate under this traffic, in another terminal:`,
  );
  console.log(
    `  ${MANAGEMENT_ENV.url}=${server.url} ${MANAGEMENT_ENV.key}=${key} ${MANAGEMENT_ENV.secret}=${secret} npx webhook rotate-credentials`,
  );
  return { server };
}

const program = new Command("simulate")
  .description("Deliver a realistic, seeded history of webhook events and check the tables afterwards")
  .option("--url <url>", "webhook URL (default: the running local stack's)")
  .option("--username <user>", "Basic auth username (default: the local stack's)")
  .option("--password <password>", "Basic auth password (default: the local stack's)")
  .option("--events <n>", "number of events to generate", integer(1, 10_000_000), 2000)
  .option("--rate <n>", "deliveries per second", decimal(0, 100_000, { exclusiveMin: true }), 200)
  .option("--concurrency <n>", "requests in flight", integer(1, 1024), 8)
  .option(
    "--seed <n>",
    `random seed (same seed, same history; default ${DEFAULT_SEED}, or the next seed whose apps hold no events yet)`,
    integer(0, 2 ** 31 - 1),
    DEFAULT_SEED,
  )
  .option(
    "--apps <ids>",
    "comma-separated app ids (default: two apps named after the seed, so runs with other seeds do not collide)",
  )
  .option("--duplicates <share>", "share of events delivered twice", decimal(0, 1), 0.05)
  .option("--reorder <share>", "share of events swapped with a neighbour", decimal(0, 1), 0.1)
  .option(
    "--files-port <port>",
    "port of the recordings file server the history's URLs point to",
    integer(0, 65535),
    8099,
  )
  .option(
    "--start <time>",
    "when the history starts: a UTC day YYYY-MM-DD or an ISO date-time (default: so that it ends a minute ago; a seed and a start give the same history)",
    parseHistoryStart,
  )
  .option(
    "--days <n>",
    "a history over the last n days (ending a minute ago), stored on the local stack as received then (the events queue, as the ingest stores a webhook's), then its days rolled up over every app: what the watchdog judges an app by (see --stop-app)",
    integer(1, 14),
  )
  .option(
    "--activity",
    "after the check, recompute the history's days and check the activity figures too (with --seed or --apps: ones not sent to this stack before)",
  )
  .option("--out <file>", "write the generated history to a file")
  .option("--replay <file>", "replay a history written by --out")
  .option("--no-check", "do not wait for the pipeline nor check the tables")
  .option(
    "--check-only",
    "send nothing: check the tables against the history of these options again (same --seed, --events, --apps)",
  )
  .option("--settle-timeout <s>", "seconds to wait for the queues to drain", integer(1, 86_400), 120)
  .option(
    "--state-dir <dir>",
    "the local stack's state directory (env LOCAL_STATE_DIR)",
    process.env.LOCAL_STATE_DIR,
  )
  .option(
    "--drop-presence <share>",
    "share of presence events not delivered (a stretch: a receiver that was down)",
    decimal(0, 1),
    0,
  )
  .option(
    "--serve-platform",
    "after playing the history (2,000 events: ~25 s), serve the platform's GET /v3/users and data import for the apps until Ctrl-C, and print the reconcile and import commands (npm run reconcile, npx webhook import)",
  )
  .option("--platform-port <port>", "port of that API (default: any)", integer(0, 65535))
  .option(
    "--stop-app <appId>",
    "stop this app's traffic half-way through its deliveries (the platform stops sending): its id, or its end (a2); the check leaves it out",
  )
  .option(
    "--disable-webhook <appId>",
    "with --connect: the platform's stand-in disables this app's webhook half-way (apps --check finds it): its id, or its end (a2)",
  )
  .option(
    "--connect",
    "play the platform's management API: connect every app to the local stack first, then deliver each event only to its app's enabled webhooks, with their credentials and triggers (rotate-credentials in another terminal rotates under this traffic)",
  )
  .option("--management-port <port>", "port of that management API (default: any)", integer(0, 65535))
  .action((o: SimulateOptions, command: Command) =>
    simulate({ ...o, seedGiven: command.getOptionValueSource("seed") !== "default" }),
  );

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exitCode = code;
