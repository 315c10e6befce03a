/**
 * `npm run reconcile -- --app <appId> --region <us|eu|in> [--api-key <key>] [--platform-url <url>]
 * [--stack <name> | --state-dir <dir>] [--json]`: brings the presence table in line with the
 * platform's user listing (see shared/reconcile).
 */
import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { parseContract } from "@webhook-backend/stream/parse";
import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import { Command } from "commander";
import { documentClient, dynamoItemStore } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { recordingApiKeysSchema } from "../../shared/contracts/secrets";
import { PRESENCE_TABLE } from "../../shared/platform/tables";
import { onlineUids } from "../../shared/reconcile/dynamo-online-users";
import type { ReconcileFactSink } from "../../shared/reconcile/fact-sink";
import { listPlatformUsers, platformBaseUrl } from "../../shared/reconcile/platform-users";
import { reconcilePresence } from "../../shared/reconcile/reconcile";
import { dynamoListenerUntil, listenerSwitch } from "../../shared/stream/listener-switch";
import { reconcileFactSink } from "../../shared/stream/reconcile-facts";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { integer, oneOf, runProgram, UsageError, UserFacingError, withTarget } from "../cli/program";
import { resolveTarget, type Target } from "../target";

interface ReconcileOptions {
  app: string;
  region?: "us" | "eu" | "in";
  apiKey?: string;
  platformUrl?: string;
  perPage: number;
  stack?: string;
  stateDir?: string;
  json?: boolean;
}

/** The app's API key: `--api-key`, `PLATFORM_API_KEY`, or the deployed stack's API-keys secret. */
async function apiKeyFor(o: ReconcileOptions, target: Target): Promise<string> {
  const given = o.apiKey ?? process.env.PLATFORM_API_KEY?.trim();
  if (given) return given;
  if (!target.apiKeysSecretArn)
    throw new UserFacingError(
      `no API key for app ${o.app}: pass --api-key (or PLATFORM_API_KEY), or deploy with recordingApiKeysSecretArn`,
    );
  const secret = await new SecretsManagerClient({}).send(
    new GetSecretValueCommand({ SecretId: target.apiKeysSecretArn }),
  );
  const keys = parseContract(
    recordingApiKeysSchema,
    JSON.parse(secret.SecretString ?? "{}"),
    "API-keys secret",
  );
  const key = keys[o.app];
  if (!key) throw new UserFacingError(`the API-keys secret has no key for app ${o.app}`);
  return key;
}

/**
 * Where the run's facts go (#57 item 4): the target's data bucket (`reconcile/`) and, when it has
 * a stream, the topic while something listens (always with declared subscribers, else while the
 * listener switch is on, as the projector decides) and its unpublished queue.
 */
function factSinkFor(target: Target): ReconcileFactSink | undefined {
  if (!target.bucket) return undefined;
  const { stream, appsTable } = target;
  const alwaysOn = stream !== undefined && Object.keys(stream.subscribers).length > 0;
  return reconcileFactSink({
    dataStore: s3BlobStore(target.s3, target.bucket),
    ...(stream?.unpublishedUrl && (alwaysOn || appsTable)
      ? {
          stream: {
            isOn: alwaysOn
              ? async () => true
              : listenerSwitch(dynamoListenerUntil(target.dynamo, appsTable ?? "")),
            publisher: snsStreamPublisher(target.sns, stream.topicArn),
            unpublished: sqsMessageQueue(target.sqs, stream.unpublishedUrl),
          },
        }
      : {}),
  });
}

async function run(o: ReconcileOptions): Promise<void> {
  if (!o.platformUrl && !o.region)
    throw new UsageError("--region (us, eu or in) is required without --platform-url");
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    const apiKey = await apiKeyFor(o, target);
    const fetchedAt = Date.now();
    const listing = await listPlatformUsers({
      baseUrl: o.platformUrl ?? platformBaseUrl(o.app, o.region ?? "us"),
      apiKey,
      appId: o.app,
      perPage: o.perPage,
    });
    const doc = documentClient(target.dynamo);
    const summary = await reconcilePresence({
      appId: o.app,
      listing,
      fetchedAt,
      onlineHere: await onlineUids(doc, target.tables.presence, o.app),
      presence: dynamoItemStore<PresenceState>(doc, PRESENCE_TABLE, target.tables.presence),
      facts: factSinkFor(target),
    });
    if (o.json) console.log(JSON.stringify(summary));
    else {
      console.log(
        `${o.app}: ${summary.seen} users listed${summary.complete ? "" : " (listing incomplete: nobody was set offline for being absent)"}; set online ${summary.setOnline}, set offline ${summary.setOffline}, unchanged ${summary.unchanged}, skipped ${summary.skipped}${summary.published || summary.unpublished ? `; on the stream ${summary.published ?? 0}${summary.unpublished ? ` (${summary.unpublished} kept for redrive --stream)` : ""}` : ""}`,
      );
      if (summary.error) console.error(`warning: ${summary.error}`);
    }
    if (!summary.complete) process.exitCode = 1;
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("reconcile")
    .description("Bring the presence table in line with the platform's user listing (GET /v3/users)")
    .requiredOption("--app <appId>", "the app")
    .option("--region <region>", "the app's region: us, eu or in", oneOf("us", "eu", "in"))
    .option("--api-key <key>", "the app's REST API key (env PLATFORM_API_KEY; deployed: the API-keys secret)")
    .option(
      "--platform-url <url>",
      "the chat API base instead of the app's host (the simulator, a test server)",
    )
    .option("--per-page <n>", "users per page", integer(1, 1000), 1000)
    .option("--json", "one JSON object on stdout"),
).action((o: ReconcileOptions) => run(o));

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exitCode = code;
