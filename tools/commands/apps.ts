/**
 * `npx webhook apps --silent | --check [--after <appId>] [--concurrency <n>] | --refused [username]
 * [--json] [--stack <name> | --state-dir <dir>]`: the watchdog over every app (#52, #58).
 * - `--silent`: the apps silent now, by the rule of `shared/watchdog/silence.ts`, from the rollup's
 *   ledger alone (fifteen reads, whatever the number of apps);
 * - `--check`: each connected app's webhook read back from the platform (management API), each
 *   finding with what to run and what was lost; streamed, resumable with `--after`;
 * - `--refused`: the usernames the deployment knows refused in the last hour (the Contributor
 *   Insights rule's report deployed, its local stand-in on `npm start`) and the apps that deliver
 *   with each; `--refused <username>`: that one (in full, or as the log keeps it).
 *
 * One exit rule (docs/operating.md): 0 nothing found wrong, 1 a finding (an app silent, a username
 * refused, a webhook wrong), 2 a usage error; the same with and without `--json`.
 */
import { CloudWatchClient } from "@aws-sdk/client-cloudwatch";
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { credentialAllowsApp } from "../../shared/ingest/credentials";
import { loggedUsername } from "../../shared/platform/log-safe";
import { silenceFromLedger } from "../../shared/watchdog/ledger-history";
import { checkPlatformWebhooks, type WebhookFinding } from "../../shared/watchdog/platform-check";
import { refusalRuleName } from "../../shared/watchdog/refusal-rule";
import { insightRefusals, type RefusedUsername } from "../../shared/watchdog/refused-report";
import type { SilenceReport } from "../../shared/watchdog/silence";
import {
  integer,
  NothingFoundError,
  runProgram,
  UsageError,
  UserFacingError,
  withTarget,
} from "../cli/program";
import { checkSummary, findingLines, refusedLines, silenceLines } from "../cli/watchdog-output";
import { refusals as localRefusals } from "../local/refusals";
import { stateDir } from "../local/state";
import { type Deployment, resolveDeployment } from "../ops/app-connection";
import { resolveTarget } from "../target";

/** The exit code of a finding, whichever the mode and with or without `--json` (docs/operating.md). */
const FINDING = 1;
/** `--refused` lists the usernames refused within this long. */
const REFUSED_WINDOW_MS = 3_600_000;

interface AppsOptions {
  silent?: boolean;
  check?: boolean;
  /** `true`: the top refused usernames; a string: that username. */
  refused?: string | boolean;
  after?: string;
  concurrency?: number;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

/** The silence report from the target's ledger (none when the target has no data bucket). */
async function silenceOf(o: AppsOptions): Promise<SilenceReport | undefined> {
  const target = await resolveTarget(o);
  try {
    if (!target.bucket) return undefined;
    return await silenceFromLedger(blobRollupLedger(s3BlobStore(target.s3, target.bucket)), Date.now());
  } finally {
    target.destroy();
  }
}

async function silent(o: AppsOptions): Promise<void> {
  const report = await silenceOf(o);
  if (!report) throw new UserFacingError("the target has no data bucket: no rollup ledger to read");
  if (o.json) console.log(JSON.stringify(report));
  else for (const line of silenceLines(report, o.stack)) console.log(line);
  if (report.silent.length > 0) process.exitCode = FINDING;
}

async function check(o: AppsOptions): Promise<void> {
  const deployment = await resolveDeployment(o);
  try {
    const registry = dynamoAppRegistry(documentClient(deployment.dynamo), deployment.appsTable);
    const apps = [...(await registry.list()).values()].filter((a) => a.webhook);
    if (apps.length === 0)
      throw new NothingFoundError("no app is connected (npx webhook connect records each app's webhook)");
    const credentials = await deployment.credentialStore.list();
    // When each app was last seen delivering, for what a finding says was lost.
    const seen = new Map(
      (await silenceOf(o).catch(() => undefined))?.silent.map((s) => [s.appId, s.lastSeenAt]),
    );
    const started = Date.now();
    const findings: WebhookFinding[] = [];
    const counts = await checkPlatformWebhooks({
      api: managementApi(await deployment.management()),
      apps,
      webhookUrl: deployment.webhookUrl,
      acceptedUsernames: (appId) =>
        credentials.filter((c) => credentialAllowsApp(c, appId)).map((c) => c.username),
      concurrency: o.concurrency ?? 4,
      ...(o.after === undefined ? {} : { after: o.after }),
      onFinding: (finding) => {
        if (o.json) return void findings.push(finding);
        const lastSeenAt = seen.get(finding.appId);
        for (const line of findingLines(finding, { stack: o.stack, ...(lastSeenAt ? { lastSeenAt } : {}) }))
          console.log(line);
      },
    });
    if (o.json) console.log(JSON.stringify({ counts, findings: findings.filter((f) => f.state !== "ok") }));
    else console.log(checkSummary(counts, (Date.now() - started) / 1000));
    if (counts.ok !== Object.values(counts).reduce((a, b) => a + b, 0)) process.exitCode = FINDING;
  } finally {
    deployment.destroy();
  }
}

/** The usernames refused in the last hour: the rule's report deployed, its local stand-in locally. */
async function refusedUsernames(o: AppsOptions, deployment: Deployment): Promise<RefusedUsername[]> {
  const until = Date.now();
  if (deployment.kind === "local") return localRefusals(stateDir(o.stateDir), until - REFUSED_WINDOW_MS);
  const cw = new CloudWatchClient({});
  try {
    return await insightRefusals(cw, refusalRuleName(deployment.name), until - REFUSED_WINDOW_MS, until);
  } finally {
    cw.destroy();
  }
}

async function refused(o: AppsOptions): Promise<void> {
  const deployment = await resolveDeployment(o);
  try {
    const registry = dynamoAppRegistry(documentClient(deployment.dynamo), deployment.appsTable);
    const apps = [...(await registry.list()).values()];
    const credentials = await deployment.credentialStore.list();
    const one = typeof o.refused === "string" ? o.refused : undefined;
    const listed: RefusedUsername[] =
      one === undefined ? await refusedUsernames(o, deployment) : [{ username: one, refusals: 0 }];
    const rows = listed.map((r) => {
      // A username as given or as the log keeps it: an operator pastes either.
      const matches = (u: string) => r.username === u || r.username === loggedUsername(u);
      return {
        ...r,
        apps: apps.filter((a) => a.webhook && matches(a.webhook.username)).map((a) => a.appId),
        accepted: credentials.some((c) => matches(c.username)),
      };
    });
    if (o.json) console.log(JSON.stringify({ refused: rows }));
    else for (const line of refusedLines(rows, { stack: o.stack, one: one !== undefined })) console.log(line);
    // A finding: a username refused (listed), or the one named delivers for an app.
    if (rows.some((r) => r.refusals > 0 || r.apps.length > 0)) process.exitCode = FINDING;
  } finally {
    deployment.destroy();
  }
}

async function run(o: AppsOptions): Promise<void> {
  const modes = [o.silent, o.check, o.refused !== undefined].filter(Boolean).length;
  if (modes !== 1) throw new UsageError("give one of --silent, --check or --refused [username]");
  if (o.after !== undefined && !o.check) throw new UsageError("--after goes with --check");
  if (o.silent) return silent(o);
  if (o.check) return check(o);
  return refused(o);
}

const program = withTarget(
  new Command("apps")
    .description(
      "The watchdog over every app: silent ones, their webhooks on the platform, refused usernames",
    )
    .option("--silent", "the apps silent now, since when and for how long (the rollup's ledger)")
    .option(
      "--check",
      "read each connected app's webhook on the platform and say what is wrong and what to run",
    )
    .option("--after <appId>", "with --check: resume after this app (apps are checked in id order)")
    .option("--concurrency <n>", "with --check: apps read at once (default 4)", integer(1, 64))
    .option(
      "--refused [username]",
      "the usernames refused in the last hour and their apps; or that username's apps (in full, or as the log keeps it)",
    )
    .option("--json", "one JSON value on stdout"),
).action((o: AppsOptions) => run(o));

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exitCode = code;
