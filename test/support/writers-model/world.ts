import { createHash } from "node:crypto";
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
} from "@aws-sdk/client-secrets-manager";
import { documentClient } from "../../../shared/adapters/dynamo-item-store";
import { connectApps } from "../../../shared/apps/connect";
import { dynamoAppRegistry } from "../../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../../shared/apps/management-api";
import type { WebhookCredential } from "../../../shared/contracts/secrets";
import type { TableNames } from "../../../shared/platform/tables";
import {
  createActivityTable,
  createAppsTable,
  createProjectionTables,
  localTableNames,
} from "../../../tools/local/provision";
import { startFileServer } from "../../../tools/simulate/file-server";
import { type ManagementApiServer, startManagementApi } from "../../../tools/simulate/management-api";
import { createBucket, createQueue, testClients, uniqueName } from "../aws";
import { type AthenaDouble, athenaDouble } from "./athena";
import { type Actor, answeredClient, type RequestGate, STUB_CLIENT_CONFIG } from "./gate";
import { injectStreamFaults, openStream, type StreamSite } from "./stream";

/*
 * A run's world (issue #50): its own bucket, projection tables, activity table, events queue,
 * apps table and credentials secret on the shared emulators, the platform's management API (the
 * simulator's double), an injected clock and seeded ids. Each operation talks to it through SDK
 * clients of its own, gated (`gate.ts`).
 */

/** Where every run's clock starts: 2026-03-01 12:00 UTC (the days of the facts follow it). */
export const T0 = Date.UTC(2026, 2, 1, 12);

/** The two apps of every run, each delivering with a credential of its own (limited to it). */
export const APPS = ["app-a", "app-b"] as const;
export type AppId = (typeof APPS)[number];

/** The management API double's key, and our webhook's id on the platform. */
const MANAGEMENT = { key: "wm-key", secret: "wm-secret" };
export const WEBHOOK = {
  id: "webhook-backend-model",
  name: "Webhook backend model",
  url: "https://hooks.example.com/webhook",
};

/** The injected clock every core of the run reads. */
export interface Clock {
  now: number;
}

/**
 * Ids from the run's seed: the same seed gives the same erasure ids, pseudonyms, credentials and
 * message ids.
 *
 * @example seededIds(7)() // "9f2c…" (16 hex digits)
 */
export function seededIds(seed: number): () => string {
  let n = 0;
  return () => createHash("sha256").update(`${seed}:${n++}`).digest("hex").slice(0, 16);
}

/** A fault the model injects where the emulators cannot fail on demand. */
export class InjectedFaultError extends Error {
  override name = "InjectedFaultError";
}

/** What a run's world holds: its resources' names and the doubles it runs. */
export interface Site {
  bucket: string;
  tables: TableNames;
  activityTable: string;
  appsTable: string;
  queueUrl: string;
  secretId: string;
  /** The credentials secret's value (Secrets Manager has no emulator: its clients answer from here). */
  secret: { value: string; puts: number };
  management: ManagementApiServer;
  clock: Clock;
  newId: () => string;
  /** Receipt handles of messages received and not yet deleted (a crashed receiver's come back at the run's settling). */
  received: Set<string>;
  /** Athena (a double): the compactor is Athena's CTAS when set, DuckDB's otherwise. */
  athena?: AthenaDouble;
  /**
   * The platform changed its joins (a third of the runs: `seed % 3 === 0`): every join's member
   * carries its avatar as a number, which the projector refuses (`quarantine/`).
   */
  changedJoins: boolean;
  /** The platform's recordings (the simulator's file server) and the recordings queue the projector sends jobs to. */
  recordings: { url: string; queueUrl: string };
  /** Faults armed by an operation: the next PUT of a CTAS marker with its query id fails (S3 refuses it). */
  faults: { ctasMarker: boolean };
  /** The stream as deployed: topic, subscriber, unpublished queue, the events DLQ (`stream.ts`). */
  stream: StreamSite;
  close(): Promise<void>;
}

/** The credential each app starts with (its webhook's pair). */
export function firstCredential(appId: AppId, newId: () => string): WebhookCredential {
  return { username: `hook-${appId}-0`, password: `pw-${newId()}`, appIds: [appId] };
}

/** Opens a fresh world: every resource made, each app connected with its credential. */
export async function openSite(seed: number, options: { athena?: boolean } = {}): Promise<Site> {
  const { dynamo, s3, sqs, sns, destroy } = testClients();
  const newId = seededIds(seed);
  const clock = { now: T0 };
  const bucket = await createBucket(s3, uniqueName("wm"));
  const tables = localTableNames(uniqueName("wm"));
  await createProjectionTables(dynamo, tables);
  const activityTable = uniqueName("wm-activity");
  await createActivityTable(dynamo, activityTable);
  const appsTable = uniqueName("wm-apps");
  await createAppsTable(dynamo, appsTable);
  const queueUrl = await createQueue(sqs, uniqueName("wm-events"));
  const stream = await openStream(sqs, sns, queueUrl);
  const management = await startManagementApi({ ...MANAGEMENT, appIds: APPS });
  const files = await startFileServer({ host: "127.0.0.1" });
  const recordingsQueueUrl = await createQueue(sqs, uniqueName("wm-recordings"));
  const credentials = APPS.map((app) => firstCredential(app, newId));
  const secret = { value: JSON.stringify({ credentials }), puts: 0 };
  const api = managementApi({ url: management.url, ...MANAGEMENT, sleep: async () => undefined });
  const registry = dynamoAppRegistry(documentClient(dynamo), appsTable);
  for (const [i, appId] of APPS.entries()) {
    const { username, password } = credentials[i] as WebhookCredential;
    await connectApps({
      api,
      registry,
      appIds: [appId],
      desired: { ...WEBHOOK, username, password, triggers: [] },
    });
  }
  destroy();
  return {
    bucket,
    tables,
    activityTable,
    appsTable,
    queueUrl,
    secretId: "arn:aws:secretsmanager:us-east-1:000000000000:secret:wm-credentials",
    secret,
    management,
    clock,
    newId,
    received: new Set(),
    ...(options.athena ? { athena: await athenaDouble(bucket) } : {}),
    changedJoins: seed % 3 === 0,
    recordings: { url: files.url, queueUrl: recordingsQueueUrl },
    faults: { ctasMarker: false },
    stream,
    close: async () => {
      await management.close();
      await files.close();
    },
  };
}

/**
 * SDK clients of one operation, each request a step of `actor` at the gate; a Secrets Manager
 * client answering from the site's secret (after its gate).
 */
export function actorClients(site: Site, gate: RequestGate, actor: Actor) {
  const clients = testClients();
  gate.gate(clients.dynamo, actor);
  gate.gate(clients.s3, actor);
  clients.s3.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string; Body?: unknown };
      if (
        site.faults.ctasMarker &&
        context.commandName === "PutObjectCommand" &&
        input.Key?.endsWith(".ctas.json") &&
        String(input.Body).includes("queryId")
      ) {
        site.faults.ctasMarker = false;
        throw new InjectedFaultError(`S3 refused the PUT of ${input.Key} (a fault the model injects)`);
      }
      return next(args);
    },
    { step: "initialize", name: "injectedFaults" },
  );
  gate.gate(clients.sqs, actor);
  gate.gate(clients.sns, actor);
  injectStreamFaults(site.stream, actor, clients);
  const secrets = answeredClient(
    new SecretsManagerClient(STUB_CLIENT_CONFIG),
    gate,
    actor,
    "secretFromSite",
    async (command, input) => {
      if (command === GetSecretValueCommand.name) return { SecretString: site.secret.value };
      if (command === PutSecretValueCommand.name) {
        site.secret.value = String(input.SecretString);
        site.secret.puts++;
        return {};
      }
      throw new Error(`the secrets double has no ${command}`);
    },
  );
  return {
    ...clients,
    doc: documentClient(clients.dynamo),
    secrets,
    destroy() {
      clients.destroy();
      secrets.destroy();
    },
  };
}

export type ActorClients = ReturnType<typeof actorClients>;

/** The current pair of an app's webhook, as the platform (the management double) holds it. */
export function webhookPair(site: Site, app: AppId): { username: string; password: string } {
  const hook = site.management.apps.get(app)?.webhooks.get(WEBHOOK.id);
  return { username: hook?.username ?? "", password: hook?.password ?? "" };
}
