/**
 * `npx webhook apps --silent | --check [--after <appId>] [--concurrency <n>] | --refused <username>
 * [--json] [--stack <name> | --state-dir <dir>]`: the watchdog over every app (#52).
 * - `--silent`: the apps silent now, by the rule of `shared/watchdog/silence.ts`, from the rollup's
 *   ledger alone (fifteen reads, whatever the number of apps);
 * - `--check`: each connected app's webhook read back from the platform (management API), each
 *   finding with what to run and what was lost; streamed, resumable with `--after`;
 * - `--refused <username>`: the apps a refused username belongs to (a 'delivery refused' line).
 */
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { credentialAllowsApp } from "../../shared/ingest/credentials";
import { silenceFromLedger } from "../../shared/watchdog/ledger-history";
import { checkPlatformWebhooks, type WebhookFinding } from "../../shared/watchdog/platform-check";
import type { SilenceReport } from "../../shared/watchdog/silence";
import { preview } from "../cli/apps-output";
import { count } from "../cli/format";
import {
  integer,
  NothingFoundError,
  runProgram,
  UsageError,
  UserFacingError,
  withTarget,
} from "../cli/program";
import { checkSummary, findingLines, silenceLines } from "../cli/watchdog-output";
import { resolveDeployment } from "../ops/app-connection";
import { resolveTarget } from "../target";

interface AppsOptions {
  silent?: boolean;
  check?: boolean;
  refused?: string;
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
  if (report.silent.length === 0 && !o.json) process.exitCode = 3;
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
    if (counts.ok !== Object.values(counts).reduce((a, b) => a + b, 0)) process.exitCode = 1;
  } finally {
    deployment.destroy();
  }
}

async function refused(o: AppsOptions, username: string): Promise<void> {
  const deployment = await resolveDeployment(o);
  try {
    const registry = dynamoAppRegistry(documentClient(deployment.dynamo), deployment.appsTable);
    const apps = [...(await registry.list()).values()];
    const delivering = apps.filter((a) => a.webhook?.username === username).map((a) => a.appId);
    const accepted = (await deployment.credentialStore.list()).some((c) => c.username === username);
    const result = { username, apps: delivering, accepted };
    if (o.json) return void console.log(JSON.stringify(result));
    if (delivering.length === 0)
      throw new NothingFoundError(
        `no connected app delivers as ${username} (the apps table): a webhook set by hand, or someone else's requests`,
      );
    console.log(
      `${username}: ${count(delivering.length, "app")} deliver with it (${preview(delivering)}); the ingest ${accepted ? "accepts it: a password changed by hand on the platform" : "no longer accepts it"}: npx webhook apps --check${o.stack ? ` --stack ${o.stack}` : ""} says what to run for each`,
    );
  } finally {
    deployment.destroy();
  }
}

async function run(o: AppsOptions): Promise<void> {
  const modes = [o.silent, o.check, o.refused !== undefined].filter(Boolean).length;
  if (modes !== 1) throw new UsageError("give one of --silent, --check or --refused <username>");
  if (o.after !== undefined && !o.check) throw new UsageError("--after goes with --check");
  if (o.silent) return silent(o);
  if (o.check) return check(o);
  return refused(o, o.refused ?? "");
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
    .option("--refused <username>", "the apps that deliver with this username (a 'delivery refused' line)")
    .option("--json", "one JSON value on stdout"),
).action((o: AppsOptions) => run(o));

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exitCode = code;
