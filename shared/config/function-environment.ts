import type * as z from "zod/mini";
import { DEFAULT_MAX_RECORDING_BYTES, RECORDER_DEADLINE_MARGIN_MS } from "../platform/constants";
import { RECORDINGS_QUEUE } from "../platform/queues";
import { type TableNames, tableEnvironment } from "../platform/tables";
import type { ingestEnv, projectorEnv, reconcilerEnv, recorderEnv, rollupEnv } from "./function-config";

/**
 * Each function's environment, built in one place: the CDK stack passes its resources' names
 * (tokens) and the local stack its emulators' resources, so the two cannot drift apart. Keys are
 * checked against the schemas `config.ts` reads them with.
 */
type EnvOf<S extends z.ZodMiniObject> = { [K in keyof z.input<S>]?: string };

export interface IngestEnvironment {
  eventsQueueUrl: string;
  dataBucket: string;
  /** The Secrets Manager secret with the Basic credentials (AWS). Locally: `localCredentials`. */
  credentialsSecretId?: string;
  /** Locally: the one pair the stack accepts. */
  localCredentials?: { username: string; password: string };
  /** Locally: the credentials file the stack re-reads (`fileCredentialSource`); wins over `localCredentials`. */
  localCredentialsFile?: string;
  /** The apps table, when only the apps allowed in it may deliver. @default - any app the credentials allow */
  allowedAppsTable?: string;
}

/** @example ingestEnvironment({ eventsQueueUrl, dataBucket, credentialsSecretId, allowedAppsTable: "apps" }) */
export function ingestEnvironment(e: IngestEnvironment): EnvOf<typeof ingestEnv> {
  return {
    EVENTS_QUEUE_URL: e.eventsQueueUrl,
    DATA_BUCKET: e.dataBucket,
    ...(e.credentialsSecretId ? { WEBHOOK_CREDENTIALS_SECRET_ID: e.credentialsSecretId } : {}),
    ...(e.localCredentialsFile ? { WEBHOOK_CREDENTIALS_FILE: e.localCredentialsFile } : {}),
    ...(e.localCredentials
      ? { WEBHOOK_USERNAME: e.localCredentials.username, WEBHOOK_PASSWORD: e.localCredentials.password }
      : {}),
    ...(e.allowedAppsTable ? { ALLOWED_APPS_TABLE: e.allowedAppsTable } : {}),
  };
}

export interface ProjectorEnvironment {
  tables: TableNames;
  dataBucket: string;
  recordingsQueueUrl: string;
  /** Days a closed item of each table stays (DynamoDB TTL). @default none expire */
  itemExpiryDays?: Partial<Record<keyof TableNames, number>>;
  /** The events queue's receives before its DLQ. @default - the configuration's: EVENTS_QUEUE.maxReceiveCount */
  eventsMaxReceiveCount?: number;
  /** The stream of facts (#41). @default - no stream */
  stream?: {
    topicArn: string;
    unpublishedQueueUrl: string;
    /** Subscribers are declared (publish always). */
    alwaysOn: boolean;
    /** The apps table (the listener switch). */
    appsTable: string;
    /** @default 60 */
    switchCacheSeconds?: number;
  };
}

export function projectorEnvironment(e: ProjectorEnvironment): EnvOf<typeof projectorEnv> {
  const expiry = Object.entries(e.itemExpiryDays ?? {}).map(([table, days]) => `${table}=${days}`);
  const stream = e.stream;
  return {
    ...tableEnvironment(e.tables),
    DATA_BUCKET: e.dataBucket,
    RECORDINGS_QUEUE_URL: e.recordingsQueueUrl,
    ...(expiry.length ? { ITEM_EXPIRY_DAYS: expiry.join(",") } : {}),
    ...(e.eventsMaxReceiveCount ? { EVENTS_MAX_RECEIVE_COUNT: String(e.eventsMaxReceiveCount) } : {}),
    ...(stream
      ? {
          STREAM_TOPIC_ARN: stream.topicArn,
          STREAM_UNPUBLISHED_QUEUE_URL: stream.unpublishedQueueUrl,
          STREAM_ALWAYS_ON: String(stream.alwaysOn),
          APPS_TABLE: stream.appsTable,
          ...(stream.switchCacheSeconds
            ? { STREAM_SWITCH_CACHE_SECONDS: String(stream.switchCacheSeconds) }
            : {}),
        }
      : {}),
  };
}

export interface RecorderEnvironment {
  sessionsTable: string;
  dataBucket: string;
  /** @default DEFAULT_MAX_RECORDING_BYTES */
  maxRecordingBytes?: number;
  /** The secret `{"<appId>":"<apiKey>"}` for token-protected recordings. @default - none */
  apiKeysSecretId?: string;
  /** The hosts the app's API key may be sent to. @default DEFAULT_RECORDING_API_KEY_HOSTS */
  apiKeyHosts?: readonly string[];
}

export function recorderEnvironment(e: RecorderEnvironment): EnvOf<typeof recorderEnv> {
  return {
    SESSIONS_TABLE: e.sessionsTable,
    DATA_BUCKET: e.dataBucket,
    MAX_RECORDING_BYTES: String(e.maxRecordingBytes ?? DEFAULT_MAX_RECORDING_BYTES),
    RECORDER_DEADLINE_MS: String(
      RECORDINGS_QUEUE.consumerTimeoutSeconds * 1000 - RECORDER_DEADLINE_MARGIN_MS,
    ),
    ...(e.apiKeysSecretId ? { RECORDING_API_KEYS_SECRET_ID: e.apiKeysSecretId } : {}),
    ...(e.apiKeyHosts ? { RECORDER_API_KEY_HOSTS: e.apiKeyHosts.join(",") } : {}),
  };
}

export interface ReconcilerEnvironment {
  presenceTable: string;
  apiKeysSecretId: string;
  apps: Record<string, "us" | "eu" | "in">;
  /** The data bucket: the facts reconcile applied are archived there (and then published: the stream's environment is added beside). */
  dataBucket?: string;
}

export function reconcilerEnvironment(e: ReconcilerEnvironment): EnvOf<typeof reconcilerEnv> {
  return {
    PRESENCE_TABLE: e.presenceTable,
    RECORDING_API_KEYS_SECRET_ID: e.apiKeysSecretId,
    RECONCILE_APPS: JSON.stringify(e.apps),
    ...(e.dataBucket ? { DATA_BUCKET: e.dataBucket } : {}),
  };
}

export interface RollupEnvironment {
  activityTable: string;
  dataBucket: string;
  athenaWorkGroup: string;
  glueDatabase: string;
  graceMinutes: number;
  /** `retainArchiveDays`: the schedule sweeps the archive by the day in its keys. Absent: kept. */
  archiveDays?: number;
}

export function rollupEnvironment(e: RollupEnvironment): EnvOf<typeof rollupEnv> {
  return {
    ACTIVITY_TABLE: e.activityTable,
    DATA_BUCKET: e.dataBucket,
    ATHENA_WORKGROUP: e.athenaWorkGroup,
    GLUE_DATABASE: e.glueDatabase,
    ACTIVITY_GRACE_MINUTES: String(e.graceMinutes),
    ...(e.archiveDays === undefined ? {} : { RETAIN_ARCHIVE_DAYS: String(e.archiveDays) }),
  };
}
