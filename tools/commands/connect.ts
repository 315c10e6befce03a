/**
 * `npx webhook connect --app <appId>… | --all-apps [--triggers a,b] [--dry-run] [--json]
 * [--stack <name> | --state-dir <dir>]`: points each app's platform webhook at this deployment
 * through the management API (`shared/apps/connect.ts`), allowing the app in the apps table.
 * The management API's url, key and secret: env PLATFORM_MANAGEMENT_URL/KEY/SECRET locally, the
 * stack's management secret deployed; never an argument.
 */
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { connectApps } from "../../shared/apps/connect";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { KNOWN_TRIGGERS } from "../../shared/events/schemas";
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
    const report = await connectApps({
      api: managementApi(await deployment.management()),
      registry,
      appIds,
      dryRun: o.dryRun,
      desired: {
        id: `webhook-backend-${suffix}`,
        name: `Webhook backend ${suffix}`,
        url: deployment.webhookUrl,
        username: deployment.credential.username,
        password: deployment.credential.password,
        triggers,
      },
    });
    const failed = report.apps.filter((a) => a.error);
    const count = (action: string) => report.apps.filter((a) => !a.error && a.action === action).length;
    if (o.json) console.log(JSON.stringify({ ...report, ms: Date.now() - started }));
    else {
      for (const a of report.apps)
        if (a.error) console.error(`${a.appId}: failed: ${a.error}`);
        else if (a.action !== "unchanged" || appIds.length <= 20)
          console.log(
            `${a.appId}: ${report.dryRun ? "would " : ""}${a.action}${a.changes.length && a.action === "update" ? ` (${a.changes.join(", ")})` : ""}`,
          );
      const writes = count("create") + count("update");
      console.log(
        `${report.dryRun ? "dry run: " : ""}${appIds.length} apps: ${count("create")} created, ${count("update")} updated, ${count("unchanged")} unchanged${failed.length ? `, ${failed.length} failed` : ""}${writes === 0 && !failed.length ? " (nothing to change)" : ""}; ${report.calls.list} lists, ${report.calls.write} writes in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    }
    if (failed.length)
      throw new UserFacingError(
        `${failed.length} apps not connected (${failed
          .slice(0, 5)
          .map((a) => a.appId)
          .join(", ")}${failed.length > 5 ? ", …" : ""}): the others are; run again to retry them`,
      );
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
