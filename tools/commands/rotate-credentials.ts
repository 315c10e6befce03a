/**
 * `npx webhook rotate-credentials [--dry-run] [--restore] [--retire-after-seconds N] [--json]
 * [--stack <name> | --state-dir <dir>]`: rotates the Basic credential every connected app delivers
 * with, with no delivery refused (`shared/apps/rotate.ts`): a new credential beside the old, the
 * ingest probed until it accepts it, every connected app's webhook switched through the
 * management API and read back, and the old one retired after the platform's retries and the
 * ingest's cache. A run that could not switch every app leaves both valid and names the apps
 * still on the old one: run it again to resume, or `--restore` to go back. The management API's
 * url, key and secret come from configuration as `connect`'s do.
 */
import { randomBytes } from "node:crypto";
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { DEFAULT_ROTATION_WAITS, restoreCredentials, rotateCredentials } from "../../shared/apps/rotate";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { basicAuthorization } from "../../shared/ingest/credentials";
import { runProgram, UserFacingError, withTarget } from "../cli/program";
import { resolveDeployment } from "../ops/app-connection";

interface RotateOptions {
  dryRun?: boolean;
  restore?: boolean;
  retireAfterSeconds?: string;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

/** A new credential: a dated username (≤ 50 characters) and 32 random bytes as the password. */
function freshCredential(): WebhookCredential {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").slice(0, 15);
  return { username: `webhook-${stamp}`, password: randomBytes(32).toString("base64url") };
}

/**
 * Whether the ingest accepts a credential: an empty body sent with it is refused as a bad request
 * (400) once authenticated, and 401 before; nothing is stored either way.
 */
function probe(webhookUrl: string) {
  return async (credential: WebhookCredential): Promise<boolean> => {
    const response = await fetch(webhookUrl, {
      method: "POST",
      headers: {
        authorization: basicAuthorization(credential.username, credential.password),
        "content-type": "application/json",
      },
      body: "",
    }).catch(() => undefined);
    return response !== undefined && response.status !== 401 && response.status < 500;
  };
}

async function run(o: RotateOptions): Promise<void> {
  const deployment = await resolveDeployment(o);
  try {
    const registry = dynamoAppRegistry(documentClient(deployment.dynamo), deployment.appsTable);
    // The apps `connect` pointed at this deployment, each with the triggers it subscribed.
    const connected = [...(await registry.list())].flatMap(([appId, app]) =>
      app.webhook ? [{ appId, triggers: app.webhook.triggers }] : [],
    );
    const suffix = deployment.name.replace(/[^A-Za-z0-9-]/g, "-").slice(0, 30);
    const common = {
      store: deployment.credentialStore,
      api: managementApi(await deployment.management()),
      registry,
      apps: connected,
      webhook: {
        id: `webhook-backend-${suffix}`,
        name: `Webhook backend ${suffix}`,
        url: deployment.webhookUrl,
      },
      accepts: probe(deployment.webhookUrl),
      waits: {
        ...DEFAULT_ROTATION_WAITS,
        ...(o.retireAfterSeconds ? { retireAfterMs: Number(o.retireAfterSeconds) * 1000 } : {}),
      },
      onStep: o.json ? undefined : (step: string) => console.log(step),
    };
    const report = o.restore
      ? await restoreCredentials(common)
      : await rotateCredentials({ ...common, fresh: freshCredential, dryRun: o.dryRun });
    if (o.json) console.log(JSON.stringify(report));
    else if (report.outcome === "dry-run")
      console.log(
        `dry run: would add a credential beside ${report.from}, switch ${connected.length} connected apps to it, then retire ${report.from}`,
      );
    else
      console.log(
        `${report.outcome}: ${report.from} → ${report.to}; ${report.confirmed.length} apps switched`,
      );
    if (report.outcome === "incomplete")
      throw new UserFacingError(
        `${report.stillOld.length} apps not switched (${report.stillOld.slice(0, 5).join(", ")}${report.stillOld.length > 5 ? ", …" : ""}): both credentials stay valid; run again to resume, or --restore`,
      );
  } finally {
    deployment.destroy();
  }
}

const program = withTarget(
  new Command("rotate-credentials")
    .description(
      "Rotate the Basic credential of every connected app with no delivery refused (management API)",
    )
    .option("--dry-run", "say what would change; write nothing")
    .option(
      "--restore",
      "undo a rotation left half-way: every app back on the old credential, the new one removed",
    )
    .option(
      "--retire-after-seconds <n>",
      `how long the old credential stays valid once every app is switched (default ${DEFAULT_ROTATION_WAITS.retireAfterMs / 1000}: the platform's retries, 40 s, and the ingest's cache, 60 s)`,
    )
    .option("--json", "one JSON object on stdout"),
).action((o: RotateOptions) => run(o));

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exitCode = code;
