/**
 * `npx webhook connect --app <appId>… | --all-apps [--triggers a,b] [--dry-run] [--json]
 * [--stack <name> | --state-dir <dir>]`: points each app's platform webhook at this deployment
 * through the management API (`shared/apps/connect.ts`), allowing the app in the apps table.
 * The management API's url, key and secret: env PLATFORM_MANAGEMENT_URL/KEY/SECRET locally, the
 * stack's management secret deployed; never an argument.
 */

import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { type ConnectReport, connectApps } from "../../shared/apps/connect";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { credentialForApp } from "../../shared/ingest/credentials";
import { connectLines } from "../cli/apps-output";
import { runProgram, UsageError, UserFacingError, withTarget } from "../cli/program";
import { resolveDeployment } from "../ops/app-connection";

interface ConnectOptions {
  app?: string[];
  allApps?: boolean;
  triggers?: string;
  dryRun?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

/** The triggers to subscribe: `--triggers` (each one this backend knows), else every one. */
function triggersOf(given: string | undefined): string[] {
  if (given === undefined) return [...KNOWN_TRIGGERS].sort();
  const chosen = given
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = chosen.filter((t) => !KNOWN_TRIGGERS.has(t));
  if (unknown.length || chosen.length === 0)
    throw new UsageError(`--triggers: unknown trigger ${unknown.join(", ") || "(none given)"}`);
  return chosen;
}

async function run(o: ConnectOptions): Promise<void> {
  if (!o.app?.length === !o.allApps) throw new UsageError("give either --app <appId>… or --all-apps");
  const triggers = triggersOf(o.triggers);
  const deployment = await resolveDeployment(o);
  try {
    const registry = dynamoAppRegistry(documentClient(deployment.dynamo), deployment.appsTable);
    const appIds = o.allApps ? [...(await registry.list()).keys()].sort() : (o.app ?? []);
    if (appIds.length === 0)
      throw new UserFacingError("this deployment knows no app yet: name them with --app <appId>…");
    const started = Date.now();
    const suffix = deployment.name.replace(/[^A-Za-z0-9-]/g, "-").slice(0, 30);
    const api = managementApi(await deployment.management());
    // Each app with the credential it may deliver with (a store may hold one per app: their appIds).
    const stored = await deployment.credentialStore.list();
    const byCredential = new Map<WebhookCredential, string[]>();
    const refused: string[] = [];
    for (const appId of appIds) {
      const credential = credentialForApp(stored, appId);
      if (credential) byCredential.set(credential, [...(byCredential.get(credential) ?? []), appId]);
      else refused.push(appId);
    }
    if (refused.length)
      throw new UserFacingError(
        `no credential of this deployment may deliver for ${refused.join(", ")} (each is limited to other apps by its appIds): add one that allows ${refused.length === 1 ? "it" : "them"} first`,
      );
    const report: ConnectReport = { apps: [], calls: { list: 0, write: 0 }, dryRun: Boolean(o.dryRun) };
    for (const [credential, ids] of byCredential) {
      const part = await connectApps({
        api,
        registry,
        appIds: ids,
        dryRun: o.dryRun,
        desired: {
          id: `webhook-backend-${suffix}`,
          name: `Webhook backend ${suffix}`,
          url: deployment.webhookUrl,
          username: credential.username,
          password: credential.password,
          triggers,
        },
      });
      report.apps.push(...part.apps);
      report.calls.list += part.calls.list;
      report.calls.write += part.calls.write;
    }
    if (o.json) console.log(JSON.stringify({ ...report, ms: Date.now() - started }));
    const { stdout, stderr, error } = connectLines(report, (Date.now() - started) / 1000);
    if (!o.json) {
      for (const line of stderr) console.error(line);
      for (const line of stdout) console.log(line);
    }
    if (error) throw new UserFacingError(error);
  } finally {
    deployment.destroy();
  }
}

const program = withTarget(
  new Command("connect")
    .description("Point each app's platform webhook at this deployment (management API), idempotently")
    .option("--app <appId...>", "the apps to connect")
    .option("--all-apps", "every app this deployment knows (its apps table)")
    .option(
      "--triggers <list>",
      "comma-separated triggers to subscribe (default: every one this backend knows)",
    )
    .option("--dry-run", "read the webhooks and say what would change; write nothing")
    .option("--json", "one JSON object on stdout"),
).action((o: ConnectOptions) => run(o));

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exitCode = code;
