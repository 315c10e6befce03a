import { ENGLISH } from "@webhook-backend/stream/parse";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import * as z from "zod/mini";
import { recordingApiKeysSchema, type WebhookCredential } from "../contracts/secrets";
import { parseCredentialList } from "../ingest/credentials";
import type { AwsClientSettings } from "../platform/aws-clients";
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_RECORDING_BYTES,
  DEFAULT_RECORDING_API_KEY_HOSTS,
  HOST_NAME_PATTERN,
  RECORDER_DEADLINE_MARGIN_MS,
  SQS_INLINE_BODY_LIMIT_BYTES,
} from "../platform/constants";
import { ConfigurationError } from "../platform/errors";
import { EVENTS_QUEUE, RECORDINGS_QUEUE } from "../platform/queues";
import { byTable, type TableEnvVar, type TableNames, tableEnvVar } from "../platform/tables";
import type { RecorderLimits } from "../recorder/archive";
import type { RecordingApiKeySource } from "../recorder/secret-api-keys";

/**
 * Environment is read here, once per cold start, trimmed and checked. A missing or malformed
 * variable throws a ConfigurationError that names it, so a bad deployment fails loudly at init.
 */
type Env = Readonly<Record<string, string | undefined>>;

// zod/mini: the same validation as classic zod in a tree-shakable form; the ingest bundle is
// size-sensitive (cold start) and classic zod alone would add ~440 KB to it. Each function's
// schema is built only in the bundle of the function that reads it: esbuild cannot tell that
// zod's constructors have no side effects, so each function's schema is marked pure.
const text = z.string().check(z.minLength(1));
const optionalText = z.optional(z.string());
const positiveInt = /* @__NO_SIDE_EFFECTS__ */ (fallback: number) =>
  z._default(z.coerce.number().check(z.int(), z.positive()), fallback);
const flag = /* @__PURE__ */ z.pipe(
  /* @__PURE__ */ z.optional(/* @__PURE__ */ z.enum(["true", "false", "1", "0"])),
  /* @__PURE__ */ z.transform((v) => v === "true" || v === "1"),
);

function parseEnv<S extends z.ZodMiniType>(schema: S, env: Env): z.infer<S> {
  // Trimmed, and an empty variable counts as unset.
  const trimmed = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v?.trim() || undefined]));
  const parsed = schema.safeParse(trimmed, ENGLISH);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((i: z.core.$ZodIssue) => `${i.path.join(".")}: ${i.message}`)
      .join("; ");
    throw new ConfigurationError(`invalid environment: ${problems}`, { cause: parsed.error });
  }
  return parsed.data;
}

/** Settings every function shares: where AWS is (an endpoint override for the local stack). */
const awsEnv = z.object({
  /** Set only by the local stack: every client talks to this endpoint (the SDK also honours AWS_ENDPOINT_URL_<SERVICE>). */
  LOCAL_AWS_ENDPOINT: optionalText,
  LOCAL_DYNAMODB_ENDPOINT: optionalText,
});

function awsSettings(env: z.infer<typeof awsEnv>): AwsClientSettings {
  return { endpoint: env.LOCAL_AWS_ENDPOINT, dynamoEndpoint: env.LOCAL_DYNAMODB_ENDPOINT };
}

export type CredentialsConfig =
  | { kind: "secret"; secretId: string; cacheSeconds: number }
  | { kind: "file"; path: string; cacheSeconds: number }
  | { kind: "static"; credentials: WebhookCredential[] };

export interface IngestConfig {
  aws: AwsClientSettings;
  eventsQueueUrl: string;
  dataBucket: string;
  credentials: CredentialsConfig;
  maxBodyBytes: number;
  inlineBodyLimitBytes: number;
  maxJsonDepth: number;
  /** When set, only the apps allowed in this apps table may deliver (others: 403). */
  allowedApps?: { tableName: string; cacheSeconds: number };
}

export const ingestEnv = /* @__PURE__ */ z.extend(awsEnv, {
  EVENTS_QUEUE_URL: text,
  DATA_BUCKET: text,
  /** In AWS: the secret with `{"credentials":[{username,password,appIds?}]}`. */
  WEBHOOK_CREDENTIALS_SECRET_ID: optionalText,
  CREDENTIALS_CACHE_SECONDS: positiveInt(60),
  /** Locally: a file with the same JSON, re-read as the secret is (the local stack's store). */
  WEBHOOK_CREDENTIALS_FILE: optionalText,
  /** Or the same JSON inline, or a single pair below. */
  WEBHOOK_CREDENTIALS: optionalText,
  WEBHOOK_USERNAME: optionalText,
  WEBHOOK_PASSWORD: optionalText,
  MAX_BODY_BYTES: positiveInt(DEFAULT_MAX_BODY_BYTES),
  MAX_JSON_DEPTH: positiveInt(64),
  /**
   * The apps table whose `allowed` records are the only apps this deployment accepts (unset: any
   * the credentials allow). A table, not a list in the environment: Lambda's 4 KB of variables
   * hold ~250 ids, a deployment serves thousands of apps.
   */
  ALLOWED_APPS_TABLE: optionalText,
  /** How long the ingest remembers that an app is allowed, seconds (a refused one: 5 s). */
  ALLOWED_APPS_CACHE_SECONDS: positiveInt(60),
});

/** Parses a variable that holds JSON; the error names the variable, never its value. */
function jsonVariable(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigurationError(`${name} is not JSON`, { cause: error });
  }
}

function credentialsConfig(env: z.infer<typeof ingestEnv>): CredentialsConfig {
  if (env.WEBHOOK_CREDENTIALS_SECRET_ID)
    return {
      kind: "secret",
      secretId: env.WEBHOOK_CREDENTIALS_SECRET_ID,
      cacheSeconds: env.CREDENTIALS_CACHE_SECONDS,
    };
  if (env.WEBHOOK_CREDENTIALS_FILE)
    return { kind: "file", path: env.WEBHOOK_CREDENTIALS_FILE, cacheSeconds: env.CREDENTIALS_CACHE_SECONDS };
  if (env.WEBHOOK_CREDENTIALS)
    return {
      kind: "static",
      credentials: parseCredentialList(jsonVariable("WEBHOOK_CREDENTIALS", env.WEBHOOK_CREDENTIALS)),
    };
  if (env.WEBHOOK_USERNAME && env.WEBHOOK_PASSWORD)
    return {
      kind: "static",
      credentials: parseCredentialList({
        credentials: [{ username: env.WEBHOOK_USERNAME, password: env.WEBHOOK_PASSWORD }],
      }),
    };
  throw new ConfigurationError(
    "no webhook credentials: set WEBHOOK_CREDENTIALS_SECRET_ID (AWS), or WEBHOOK_CREDENTIALS, or WEBHOOK_USERNAME and WEBHOOK_PASSWORD",
  );
}

/** Reads the ingest function's configuration. */
export function loadIngestConfig(env: Env): IngestConfig {
  const e = parseEnv(ingestEnv, env);
  return {
    aws: awsSettings(e),
    eventsQueueUrl: e.EVENTS_QUEUE_URL,
    dataBucket: e.DATA_BUCKET,
    credentials: credentialsConfig(e),
    maxBodyBytes: e.MAX_BODY_BYTES,
    inlineBodyLimitBytes: Math.min(SQS_INLINE_BODY_LIMIT_BYTES, e.MAX_BODY_BYTES),
    maxJsonDepth: e.MAX_JSON_DEPTH,
    ...(e.ALLOWED_APPS_TABLE
      ? { allowedApps: { tableName: e.ALLOWED_APPS_TABLE, cacheSeconds: e.ALLOWED_APPS_CACHE_SECONDS } }
      : {}),
  };
}

/** The list in a comma-separated variable, trimmed, empty entries dropped. */
function commaList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
}

/** A variable per projection table, its deployed name: `GROUPS_TABLE`, … */
const tablesEnv = /* @__PURE__ */ Object.fromEntries(
  PROJECTION_TABLE_NAMES.map((name) => [tableEnvVar(name), text]),
) as Record<TableEnvVar, typeof text>;

function tableNames(e: Record<TableEnvVar, string>): TableNames {
  return byTable((name) => e[tableEnvVar(name)]);
}

/** Where and when the projector publishes accepted facts (#41); absent: no stream at all. */
export interface StreamConfig {
  topicArn: string;
  /** The stream's own dead-letter queue: facts whose publish kept failing. */
  unpublishedQueueUrl: string;
  /** Subscribers are declared: publish always, without reading the listener switch. */
  alwaysOn: boolean;
  /** The apps table holding the listener switch (read when not `alwaysOn`). */
  appsTable?: string;
  /** How long a container trusts what it read of the switch, ms. */
  switchCacheMs: number;
}

export interface ProjectorConfig {
  aws: AwsClientSettings;
  tables: TableNames;
  dataBucket: string;
  recordingsQueueUrl: string;
  /** How long a closed item of each table stays (DynamoDB TTL), days. */
  itemExpiryDays: Partial<Record<keyof TableNames, number>>;
  /** The events queue's receives before its DLQ: a record's last receive does not fail on a publish. */
  maxReceiveCount: number;
  stream?: StreamConfig;
  /**
   * Where the erased subjects are (#50: the apps table, `shared/erasure/erased-subjects.ts`) and how
   * long a container trusts what it read of them, ms (the apps table's cache, as the switch's).
   * Unset without the apps table: deliveries are projected as received.
   */
  erasedSubjects?: { appsTable: string; cacheMs: number };
}

/** A publisher's stream settings (the projector's, the reconciler's: #57 item 4). */
const streamEnv = {
  /** The stream's topic (#41); unset: nothing is ever published. */
  STREAM_TOPIC_ARN: optionalText,
  /** Required with the topic: where a fact goes whose publish failed on its last receive. */
  STREAM_UNPUBLISHED_QUEUE_URL: optionalText,
  /** "true" when the deployment declares subscribers; else publishing waits for the listener switch. */
  STREAM_ALWAYS_ON: flag,
  /**
   * The apps table, where the listener switch (required with the topic unless always on) and the
   * erased subjects are (#50: a delivery naming one is redacted in flight).
   */
  APPS_TABLE: optionalText,
  /** How long what the projector reads of the apps table (the switch, the erased subjects) is kept, seconds (the local stack's is shorter). */
  STREAM_SWITCH_CACHE_SECONDS: positiveInt(60),
};

export const projectorEnv = /* @__PURE__ */ z.extend(awsEnv, {
  ...tablesEnv,
  DATA_BUCKET: text,
  RECORDINGS_QUEUE_URL: text,
  /** `<table>=<days>,…`: the tables whose closed items expire, and after how many days. */
  ITEM_EXPIRY_DAYS: optionalText,
  EVENTS_MAX_RECEIVE_COUNT: positiveInt(EVENTS_QUEUE.maxReceiveCount),
  ...streamEnv,
});

/** The stream's settings, or undefined without a topic; a topic without its queue (or switch) is a ConfigurationError. */
function streamConfig(
  e: Pick<
    z.infer<typeof projectorEnv>,
    | "STREAM_TOPIC_ARN"
    | "STREAM_UNPUBLISHED_QUEUE_URL"
    | "STREAM_ALWAYS_ON"
    | "APPS_TABLE"
    | "STREAM_SWITCH_CACHE_SECONDS"
  >,
): StreamConfig | undefined {
  if (!e.STREAM_TOPIC_ARN) return undefined;
  if (!e.STREAM_UNPUBLISHED_QUEUE_URL)
    throw new ConfigurationError(
      "invalid environment: STREAM_UNPUBLISHED_QUEUE_URL is required with STREAM_TOPIC_ARN",
    );
  if (!e.STREAM_ALWAYS_ON && !e.APPS_TABLE)
    throw new ConfigurationError(
      "invalid environment: APPS_TABLE (the listener switch) is required with STREAM_TOPIC_ARN unless STREAM_ALWAYS_ON",
    );
  return {
    topicArn: e.STREAM_TOPIC_ARN,
    unpublishedQueueUrl: e.STREAM_UNPUBLISHED_QUEUE_URL,
    alwaysOn: e.STREAM_ALWAYS_ON,
    ...(e.APPS_TABLE ? { appsTable: e.APPS_TABLE } : {}),
    switchCacheMs: e.STREAM_SWITCH_CACHE_SECONDS * 1000,
  };
}

/** `sessions=400,presence=400` as days per table; a name or a number it cannot take is a ConfigurationError. */
function itemExpiryDays(spec: string | undefined): ProjectorConfig["itemExpiryDays"] {
  const days: ProjectorConfig["itemExpiryDays"] = {};
  for (const pair of spec ? spec.split(",") : []) {
    const [table, value] = pair.split("=").map((x) => x.trim());
    const n = Number(value);
    if (!PROJECTION_TABLE_NAMES.includes(table as keyof TableNames) || !Number.isInteger(n) || n < 1)
      throw new ConfigurationError(`invalid environment: ITEM_EXPIRY_DAYS: "${pair}" is not <table>=<days>`);
    days[table as keyof TableNames] = n;
  }
  return days;
}

/** Reads the projector function's configuration. */
export function loadProjectorConfig(env: Env): ProjectorConfig {
  const e = parseEnv(projectorEnv, env);
  return {
    aws: awsSettings(e),
    tables: tableNames(e),
    dataBucket: e.DATA_BUCKET,
    recordingsQueueUrl: e.RECORDINGS_QUEUE_URL,
    itemExpiryDays: itemExpiryDays(e.ITEM_EXPIRY_DAYS),
    maxReceiveCount: e.EVENTS_MAX_RECEIVE_COUNT,
    stream: streamConfig(e),
    ...(e.APPS_TABLE
      ? { erasedSubjects: { appsTable: e.APPS_TABLE, cacheMs: e.STREAM_SWITCH_CACHE_SECONDS * 1000 } }
      : {}),
  };
}

export interface RecorderConfig {
  aws: AwsClientSettings;
  sessionsTable: string;
  dataBucket: string;
  apiKeys: RecordingApiKeySource;
  allowHttp: boolean;
  allowedHosts: string[];
  /** The hosts (and their subdomains) a recording request may carry the app's key to. */
  apiKeyHosts: string[];
  limits: RecorderLimits;
}

export const recorderEnv = /* @__PURE__ */ z.extend(awsEnv, {
  SESSIONS_TABLE: text,
  DATA_BUCKET: text,
  /** In AWS: a secret with `{"<appId>":"<apiKey>"}` for token-protected recordings. */
  RECORDING_API_KEYS_SECRET_ID: optionalText,
  /** Locally: the same JSON inline. */
  RECORDING_API_KEYS: optionalText,
  /** Local stack and tests only: allow http:// and these hosts whatever their address. */
  RECORDER_ALLOW_HTTP: flag,
  RECORDER_ALLOWED_HOSTS: optionalText,
  /** Comma-separated host names the app's API key may be sent to. @default DEFAULT_RECORDING_API_KEY_HOSTS */
  RECORDER_API_KEY_HOSTS: optionalText,
  RECORDER_CONNECT_TIMEOUT_MS: positiveInt(5_000),
  RECORDER_IDLE_TIMEOUT_MS: positiveInt(30_000),
  RECORDER_DEADLINE_MS: positiveInt(
    RECORDINGS_QUEUE.consumerTimeoutSeconds * 1000 - RECORDER_DEADLINE_MARGIN_MS,
  ),
  MAX_RECORDING_BYTES: positiveInt(DEFAULT_MAX_RECORDING_BYTES),
  RECORDER_MAX_REDIRECTS: positiveInt(5),
  RECORDER_PART_SIZE: positiveInt(5 * 1024 ** 2),
  RECORDER_QUEUE_SIZE: positiveInt(4),
});

export interface ReconcilerConfig {
  aws: AwsClientSettings;
  presenceTable: string;
  apiKeysSecretId: string;
  /** The apps to reconcile, with the region of each (its chat API host). */
  apps: Record<string, "us" | "eu" | "in">;
  /** Where the facts that changed an item are archived (`reconcile/`, #57 item 4); unset: not archived nor published. */
  dataBucket?: string;
  /** The stream its facts are published on (as the projector's). */
  stream?: StreamConfig;
}

export const reconcilerEnv = /* @__PURE__ */ z.extend(awsEnv, {
  PRESENCE_TABLE: text,
  RECORDING_API_KEYS_SECRET_ID: text,
  /** JSON `{"<appId>": "us" | "eu" | "in"}`. */
  RECONCILE_APPS: text,
  /** The data bucket: its facts are archived under `reconcile/` (#57 item 4). */
  DATA_BUCKET: optionalText,
  ...streamEnv,
});

/** Reads the scheduled reconciler's configuration. */
export function loadReconcilerConfig(env: Env): ReconcilerConfig {
  const e = parseEnv(reconcilerEnv, env);
  const apps = z
    .record(z.string().check(z.minLength(1)), z.enum(["us", "eu", "in"]))
    .safeParse(jsonVariable("RECONCILE_APPS", e.RECONCILE_APPS), ENGLISH);
  if (!apps.success)
    throw new ConfigurationError('RECONCILE_APPS must be a JSON object of appId to "us", "eu" or "in"', {
      cause: apps.error,
    });
  return {
    aws: awsSettings(e),
    presenceTable: e.PRESENCE_TABLE,
    apiKeysSecretId: e.RECORDING_API_KEYS_SECRET_ID,
    apps: apps.data,
    ...(e.DATA_BUCKET ? { dataBucket: e.DATA_BUCKET } : {}),
    ...(e.DATA_BUCKET && e.STREAM_TOPIC_ARN ? { stream: streamConfig(e) } : {}),
  };
}

/** The API-key hosts of `RECORDER_API_KEY_HOSTS`, each a host name, or the platform's own by default. */
function apiKeyHosts(value: string | undefined): string[] {
  if (value === undefined) return [...DEFAULT_RECORDING_API_KEY_HOSTS];
  const hosts = commaList(value);
  const bad = hosts.filter((h) => !HOST_NAME_PATTERN.test(h));
  if (bad.length > 0)
    throw new ConfigurationError(
      `RECORDER_API_KEY_HOSTS must be comma-separated host names (no scheme, path or wildcard): ${bad.join(", ")}`,
    );
  return hosts;
}

/** Reads the recorder function's configuration. */
export function loadRecorderConfig(env: Env): RecorderConfig {
  const e = parseEnv(recorderEnv, env);
  let apiKeys: RecorderConfig["apiKeys"] = { kind: "static", keys: {} };
  if (e.RECORDING_API_KEYS_SECRET_ID)
    apiKeys = { kind: "secret", secretId: e.RECORDING_API_KEYS_SECRET_ID, cacheSeconds: 300 };
  else if (e.RECORDING_API_KEYS) {
    const parsed = recordingApiKeysSchema.safeParse(
      jsonVariable("RECORDING_API_KEYS", e.RECORDING_API_KEYS),
      ENGLISH,
    );
    if (!parsed.success)
      throw new ConfigurationError("RECORDING_API_KEYS must be a JSON object of appId to apiKey", {
        cause: parsed.error,
      });
    apiKeys = { kind: "static", keys: parsed.data };
  }
  return {
    aws: awsSettings(e),
    sessionsTable: e.SESSIONS_TABLE,
    dataBucket: e.DATA_BUCKET,
    apiKeys,
    allowHttp: e.RECORDER_ALLOW_HTTP,
    allowedHosts: commaList(e.RECORDER_ALLOWED_HOSTS),
    apiKeyHosts: apiKeyHosts(e.RECORDER_API_KEY_HOSTS),
    limits: {
      connectTimeoutMs: e.RECORDER_CONNECT_TIMEOUT_MS,
      idleTimeoutMs: e.RECORDER_IDLE_TIMEOUT_MS,
      deadlineMs: e.RECORDER_DEADLINE_MS,
      maxBytes: e.MAX_RECORDING_BYTES,
      maxRedirects: e.RECORDER_MAX_REDIRECTS,
      partSize: e.RECORDER_PART_SIZE,
      queueSize: e.RECORDER_QUEUE_SIZE,
    },
  };
}

export interface RollupConfig {
  aws: AwsClientSettings;
  activityTable: string;
  dataBucket: string;
  athenaWorkGroup: string;
  glueDatabase: string;
  /** How long after a day's end late events are awaited (ms). */
  graceMs: number;
  /**
   * Days the archive is kept (`retainArchiveDays`): the schedule sweeps what expired by the day in
   * its keys once a day. Absent: the archive is kept.
   */
  archiveDays?: number;
}

export const rollupEnv = /* @__PURE__ */ z.extend(awsEnv, {
  ACTIVITY_TABLE: text,
  DATA_BUCKET: text,
  ATHENA_WORKGROUP: text,
  GLUE_DATABASE: text,
  ACTIVITY_GRACE_MINUTES: positiveInt(120),
  RETAIN_ARCHIVE_DAYS: /* @__PURE__ */ z.optional(
    /* @__PURE__ */ z.coerce.number().check(z.int(), z.positive()),
  ),
});

/** Reads the scheduled activity rollup's configuration. */
export function loadRollupConfig(env: Env): RollupConfig {
  const e = parseEnv(rollupEnv, env);
  return {
    aws: awsSettings(e),
    activityTable: e.ACTIVITY_TABLE,
    dataBucket: e.DATA_BUCKET,
    athenaWorkGroup: e.ATHENA_WORKGROUP,
    glueDatabase: e.GLUE_DATABASE,
    graceMs: e.ACTIVITY_GRACE_MINUTES * 60_000,
    ...(e.RETAIN_ARCHIVE_DAYS === undefined ? {} : { archiveDays: e.RETAIN_ARCHIVE_DAYS }),
  };
}
