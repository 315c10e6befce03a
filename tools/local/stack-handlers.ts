/**
 * The real handlers in this process: their configuration from the builders the CDK app uses (local
 * endpoints, credentials, the recorder's local-only allowance), imported once it is in the
 * environment, and the ingest's local-only hint on a 401.
 */
import { join } from "node:path";
import {
  ingestEnvironment,
  projectorEnvironment,
  recorderEnvironment,
} from "../../shared/config/function-environment";
import { DEFAULT_RECORDING_API_KEY_HOSTS } from "../../shared/platform/constants";
import { credentialsFilePath } from "./credentials-store";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "./emulators";
import type { HttpApiHandler } from "./http-gateway";
import type { SqsHandler } from "./poller";
import type { LocalStackOptions } from "./stack-options";
import type { LocalResources } from "./stack-resources";

/** How long the local projector trusts what it read of the listener switch (deployed: a minute). */
const LOCAL_SWITCH_CACHE_SECONDS = 1;

/**
 * The handlers' configuration from the same builders the CDK app uses, but for the local
 * endpoints and credentials, and the recorder's local-only allowance (http and loopback file
 * servers): on here only. All three functions share this process, so their variables merge.
 */
export function configureHandlers(
  options: LocalStackOptions,
  resources: LocalResources,
  credentialsFile: string,
  endpoints: { aws: string; dynamodb: string },
): void {
  const { tables, bucket, events, recordings, appsTable, restrictApps, stream } = resources;
  Object.assign(process.env, {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    LOCAL_AWS_ENDPOINT: endpoints.aws,
    LOCAL_DYNAMODB_ENDPOINT: endpoints.dynamodb,
    ...ingestEnvironment({
      eventsQueueUrl: events.url,
      dataBucket: bucket,
      localCredentialsFile: credentialsFile,
      allowedAppsTable: restrictApps ? appsTable : undefined,
    }),
    ...projectorEnvironment({
      tables,
      dataBucket: bucket,
      recordingsQueueUrl: recordings.url,
      itemExpiryDays: options.retention?.items,
      stream: {
        topicArn: stream.topicArn,
        unpublishedQueueUrl: stream.unpublished.url,
        alwaysOn: (options.streamSubscribers?.length ?? 0) > 0,
        appsTable,
        // A listener started here is seen within a second or two, not a minute.
        switchCacheSeconds: LOCAL_SWITCH_CACHE_SECONDS,
      },
    }),
    ...recorderEnvironment({ sessionsTable: tables.sessions, dataBucket: bucket }),
    ...(options.recordingPolicy === "deployed"
      ? { RECORDER_ALLOW_HTTP: "false", RECORDER_ALLOWED_HOSTS: "" }
      : {
          RECORDER_ALLOW_HTTP: "true",
          RECORDER_ALLOWED_HOSTS: "127.0.0.1,localhost,::1",
          // Local recording servers hold the key as the platform's would.
          RECORDER_API_KEY_HOSTS: `${DEFAULT_RECORDING_API_KEY_HOSTS.join(",")},127.0.0.1,localhost,::1`,
        }),
    POWERTOOLS_METRICS_DISABLED: "true",
    // Locally every event gets its line, in the state directory's log (and on the terminal with
    // --verbose); deployed, per-event lines are DEBUG: log bytes are billed.
    POWERTOOLS_LOG_LEVEL: "DEBUG",
  });
}

/**
 * The ingest, with a local-only pointer on its 401s: where this stack's current credentials are
 * (a rotation changes them, so a pasted default pair stops working). Deployed, a 401 says nothing
 * about where credentials live.
 */
export function withCredentialsHint(ingest: HttpApiHandler, stateDir: string): HttpApiHandler {
  const hint = `this local stack's current credentials are printed by npm start and kept in ${join(stateDir, "stack.json")} ("credentials"); every accepted pair is in ${credentialsFilePath(stateDir)}`;
  return async (event) => {
    const result = await ingest(event);
    if (result.statusCode !== 401 || typeof result.body !== "string") return result;
    try {
      return { ...result, body: JSON.stringify({ ...(JSON.parse(result.body) as object), hint }) };
    } catch {
      return result;
    }
  };
}

/** The real handlers, imported once their configuration is in the environment (they read it at import). */
export async function loadHandlers() {
  return {
    ingest: (await import("../../functions/ingest/handler")).handler as HttpApiHandler,
    projector: (await import("../../functions/projector/handler")).handler as SqsHandler,
    recorder: (await import("../../functions/recorder/handler")).handler as SqsHandler,
  };
}
