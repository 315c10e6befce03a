/**
 * `npx webhook rotate-credentials [--credential <username>…] [--dry-run] [--restore]
 * [--retire-after-seconds N] [--json] [--stack <name> | --state-dir <dir>]`: rotates the Basic
 * credentials the connected apps deliver with, one, some or every one, with no delivery refused
 * (`shared/apps/rotate.ts`): a new credential beside each old one (keeping its `appIds`), the
 * ingest probed until it accepts it, each app that delivers with the old one switched through the
 * management API and read back, the old one removed after the platform's retries, and the ingest
 * probed with it until it refuses it (its cache). Exit 0 only when every old credential is
 * refused; 1 when an app could not be switched (both stay valid: run again to resume, or
 * `--restore`) or an old one is still accepted past the cache. The management API's url, key and
 * secret come from configuration as `connect`'s do.
 */
import { randomBytes } from "node:crypto";
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { DEFAULT_ROTATION_WAITS, restoreCredentials, rotateCredentials } from "../../shared/apps/rotate";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { preview, rotationLines } from "../cli/apps-output";
import { count } from "../cli/format";
import { integer, runProgram, UserFacingError, withTarget } from "../cli/program";
import { ingestProbe, resolveDeployment } from "../ops/app-connection";

interface RotateOptions {
  credential?: string[];
  dryRun?: boolean;
  restore?: boolean;
  retireAfterSeconds?: number;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

/**
 * A new credential, letters and digits only (the platform's rule for Basic pairs): a dated
 * username with a random tail (≤ 50 characters, distinct when several are made at once) and
 * 192 random bits as the password.
 */
function freshCredential(): Pick<WebhookCredential, "username" | "password"> {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").slice(0, 15);
  return {
    username: `webhook${stamp}${randomBytes(3).toString("hex")}`,
    password: randomBytes(24).toString("hex"),
  };
}

async function run(o: RotateOptions): Promise<void> {
  const deployment = await resolveDeployment(o);
  try {
    const registry = dynamoAppRegistry(documentClient(deployment.dynamo), deployment.appsTable);
    // The apps `connect` pointed at this deployment, each with its triggers and the credential it delivers with.
    const connected = [...(await registry.list())].flatMap(([appId, app]) =>
      app.webhook ? [{ appId, triggers: app.webhook.triggers, username: app.webhook.username }] : [],
    );
    const suffix = deployment.name.replace(/[^A-Za-z0-9-]/g, "-").slice(0, 30);
    const common = {
      store: deployment.credentialStore,
      api: managementApi(await deployment.management()),
      registry,
      apps: connected,
      credentials: o.credential?.length ? o.credential : undefined,
      webhook: {
        id: `webhook-backend-${suffix}`,
        name: `Webhook backend ${suffix}`,
        url: deployment.webhookUrl,
      },
      accepts: ingestProbe(deployment.webhookUrl),
      waits: {
        ...DEFAULT_ROTATION_WAITS,
        ...(o.retireAfterSeconds === undefined ? {} : { retireAfterMs: o.retireAfterSeconds * 1000 }),
      },
      onStep: o.json ? undefined : (step: string) => console.log(step),
    };
    const report = o.restore
      ? await restoreCredentials(common)
      : await rotateCredentials({ ...common, fresh: freshCredential, dryRun: o.dryRun });
    if (o.json) console.log(JSON.stringify(report));
    else for (const line of rotationLines(report, Boolean(o.restore))) console.log(line);
    if (report.outcome === "incomplete")
      throw new UserFacingError(
        `${count(report.stillOld.length, "app")} not switched (${preview(report.stillOld)}): their credentials stay valid beside the new ones; run again to resume${o.restore ? "" : ", or --restore"}`,
      );
    if (report.outcome === "still-accepted")
      throw new UserFacingError(
        `the ingest still accepts ${report.credentials
          .filter((c) => c.outcome === "still-accepted")
          .map((c) => c.from)
          .join(
            ", ",
          )} although it left the store: check that the ingest reads this store (${deployment.kind === "local" ? "the local stack of this state directory" : "the stack's credentials secret"})`,
      );
  } finally {
    deployment.destroy();
  }
}

const program = withTarget(
  new Command("rotate-credentials")
    .description(
      "Rotate the Basic credentials the connected apps deliver with (management API), with no delivery refused; exits 0 once the old ones are refused",
    )
    .option(
      "--credential <username...>",
      "the credentials to rotate, by username (default: every one in the store); each new one keeps its appIds",
    )
    .option("--dry-run", "say what would change; write nothing")
    .option(
      "--restore",
      "undo a rotation left half-way: its apps back on the old credential, the new one removed",
    )
    .option(
      "--retire-after-seconds <n>",
      `how long an old credential stays once every app of it is switched (default ${DEFAULT_ROTATION_WAITS.retireAfterMs / 1000}: the platform retries a delivery for 40 s); then the ingest's cache (${DEFAULT_ROTATION_WAITS.cacheMs / 1000} s) is waited for, probing until the old one is refused`,
      integer(0, 3600),
    )
    .option("--json", "one JSON object on stdout"),
).action((o: RotateOptions) => run(o));

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exitCode = code;
