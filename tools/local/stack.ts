import { mkdirSync, readdirSync, rmSync } from "node:fs";
import type http from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import type { SNSClient } from "@aws-sdk/client-sns";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import {
  ingestEnvironment,
  projectorEnvironment,
  recorderEnvironment,
} from "../../shared/config/function-environment";
import { DEFAULT_RECORDING_API_KEY_HOSTS } from "../../shared/platform/constants";
import { errorSummary } from "../../shared/platform/errors";
import { EVENTS_QUEUE, type QueueDefinition, RECORDINGS_QUEUE } from "../../shared/platform/queues";
import type { TableNames } from "../../shared/platform/tables";
import type { StreamSubscriber } from "../../shared/stream/subscribers";
import { emulatorClients } from "./clients";
import { credentialsFilePath, ensureCredentialStore } from "./credentials-store";
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  type RunningEmulator,
  startDynamoDbLocal,
  startFauxqsEmulator,
} from "./emulators";
import { FLOW_WINDOW_SECONDS } from "./flow";
import { type HttpApiHandler, startGateway } from "./http-gateway";
import { acquireStateLock, STATE_LOCK_FILE } from "./lock";
import { type LogMode, stackLog, tapFunctionLogs } from "./log-tap";
import { type SqsHandler, SqsPoller } from "./poller";
import {
  createActivityTable,
  createAppsTable,
  createProjectionTables,
  localActivityTableName,
  localAppsTableName,
  localTableNames,
} from "./provision";
import { applyRetention, type RetentionWindows } from "./retention";
import { startLocalRollups } from "./rollups";
import {
  appendLedger,
  compactStats,
  type LocalStackInfo,
  removeStackInfo,
  resetStats,
  writeStackInfo,
} from "./state";
import type { StatusLine } from "./status-line";
import { type LocalStream, provisionStream } from "./stream";

/** Development defaults, printed at start and documented in the README. Never used in AWS. */
export const DEV_USERNAME = "local-webhook";
export const DEV_PASSWORD = "local-password-change-me";

/** How long the local projector trusts what it read of the listener switch (deployed: a minute). */
const LOCAL_SWITCH_CACHE_SECONDS = 1;

/** Locally a failed event is retried after this many seconds (deployed: 6 × the consumer's timeout). */
export const DEFAULT_LOCAL_RETRY_SECONDS = 5;

export interface LocalStackOptions {
  port: number;
  host?: string;
  stateDir: string;
  /** Keep nothing on disk (DynamoDB Local and fauxqs in memory). */
  inMemory?: boolean;
  /** Start from empty tables, queues and bucket. */
  clean?: boolean;
  username?: string;
  password?: string;
  /** What the terminal shows of the functions' lines (`LogMode`). @default "readable" */
  logMode?: LogMode;
  /** The live status line (`npm start`'s default), fed with every outcome and stepped around other output. */
  status?: Pick<StatusLine, "count" | "terminal">;
  /**
   * Seconds before a failed event is received again (the queue's visibility timeout); recording
   * jobs wait six times as long. The receive counts before the DLQ are the deployed ones.
   * @default DEFAULT_LOCAL_RETRY_SECONDS
   */
  retrySeconds?: number;
  /**
   * `local` (default): the recorder may fetch over http and from loopback, so the simulator's file
   * server works. `deployed`: the policy AWS runs (https only, public addresses only).
   */
  recordingPolicy?: "local" | "deployed";
  /**
   * Accept only the apps allowed in the apps table (as `restrictApps` deployed).
   * @default - on when `allowedAppIds` is given
   */
  restrictApps?: boolean;
  /** App ids written as allowed into the apps table at start (as the `allowedAppIds` context key deployed). */
  allowedAppIds?: readonly string[];
  /** Recompute today's activity figures every this many minutes (0 or absent: never). */
  activityEveryMinutes?: number;
  /**
   * The retention windows applied on start and every hour (`tools/local/retention.ts`): `npm
   * start` reads cdk.json's context, as a deployment would. @default none: everything is kept
   */
  retention?: RetentionWindows;
  /**
   * The stream's subscribers (#41), as cdk.json's `streamSubscribers` declares them: each gets its
   * queue and filter locally. @default none: the projector publishes only while `listen` runs
   */
  streamSubscribers?: readonly StreamSubscriber[];
  /** Emulator ports (default: free ones). */
  dynamoPort?: number;
  fauxqsPort?: number;
}

export interface LocalStack {
  info: LocalStackInfo;
  clients: { sqs: SQSClient; sns: SNSClient; s3: S3Client; dynamo: DynamoDBClient };
  /** The DynamoDB Local process id (tests check it is gone after stop). */
  dynamoPid: number | undefined;
  /** How many credentials its store holds (`info.credentials` is the current one): the banner says where the others are. */
  credentialCount: number;
  stop(): Promise<void>;
}

export class PortInUseError extends Error {
  override name = "PortInUseError";
}

async function assertPortFree(port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new PortInUseError(
              `port ${port} is already in use: stop what runs there, or start on another with PORT=<port> npm start`,
            )
          : error,
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** `--clean`: everything in the state directory but the lock this start holds. */
function emptyStateDir(dir: string): void {
  for (const entry of readdirSync(dir))
    if (entry !== STATE_LOCK_FILE) rmSync(join(dir, entry), { recursive: true, force: true });
}

async function queueArn(sqs: SQSClient, url: string | undefined): Promise<string> {
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ["QueueArn"] }));
  return out.Attributes?.QueueArn ?? "";
}

/**
 * A queue and its DLQ, as the CDK app makes them but for the visibility timeout: a failed message
 * comes back `retrySeconds` after its batch could have closed (the batching window comes first, or
 * a message would be received twice while its batch is still being gathered). Created if missing
 * (kept by fauxqs's persistence otherwise), then set to this start's attributes.
 */
async function ensureQueuePair(sqs: SQSClient, definition: QueueDefinition, retrySeconds: number) {
  const visibilitySeconds = definition.batchingWindowSeconds + retrySeconds;
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${definition.name}-dlq`,
      Attributes: { MessageRetentionPeriod: String(14 * 86400) },
    }),
  );
  const queue = await sqs.send(new CreateQueueCommand({ QueueName: definition.name }));
  await sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: queue.QueueUrl,
      Attributes: {
        VisibilityTimeout: String(visibilitySeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: await queueArn(sqs, dlq.QueueUrl),
          maxReceiveCount: String(definition.maxReceiveCount),
        }),
      },
    }),
  );
  return {
    url: queue.QueueUrl ?? "",
    arn: await queueArn(sqs, queue.QueueUrl),
    deadLetterUrl: dlq.QueueUrl ?? "",
  };
}

async function ensureBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if ((error as { name?: string }).name !== "BucketAlreadyOwnedByYou") throw error;
  }
}

/** The emulators, each on its own persistence under the state directory (or in memory). */
async function startEmulators(options: LocalStackOptions, started: RunningEmulator[]) {
  const dir = options.stateDir;
  const persist = (name: string) => {
    if (options.inMemory) return undefined;
    mkdirSync(join(dir, name), { recursive: true });
    return join(dir, name);
  };
  const track = (e: RunningEmulator) => {
    started.push(e);
    return e;
  };
  return Promise.all([
    startDynamoDbLocal({ port: options.dynamoPort, dbPath: persist("dynamodb") }).then(track),
    startFauxqsEmulator({
      port: options.fauxqsPort,
      dataDir: persist("fauxqs"),
      s3StorageDir: persist("s3"),
    }).then(track),
  ]);
}

/**
 * Starts the whole pipeline on this machine: DynamoDB Local and fauxqs on their own write-through
 * persistence, the tables, queues, DLQs and bucket from the definitions the CDK app uses, the real
 * handlers behind a local API Gateway and two pollers that play Lambda's SQS event source
 * mappings. One stack per process (the handlers read their configuration once, when first
 * imported) and per state directory (a lock).
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const host = options.host ?? "127.0.0.1";
  const lock = await lockStateDir(options, host);
  const started: RunningEmulator[] = [];
  const cleanup = async () => {
    await Promise.allSettled(started.map((e) => e.stop()));
    lock.release();
  };
  try {
    const [dynamoLocal, fauxqs] = await startEmulators(options, started);
    lock.record({ dynamoPid: dynamoLocal.pid });
    const clients = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
    const resources = await provisionResources(clients, options);
    const store = ensureCredentialStore(
      options.stateDir,
      options.username && options.password
        ? { username: options.username, password: options.password }
        : undefined,
      { username: options.username ?? DEV_USERNAME, password: options.password ?? DEV_PASSWORD },
    );
    const credentials = store.current;
    configureHandlers(options, resources, store.path, {
      aws: fauxqs.endpoint,
      dynamodb: dynamoLocal.endpoint,
    });
    const untap = openLedger(options);
    const handlers = await loadHandlers();

    let ready = false;
    const gateway = await startGateway({
      port: options.port,
      host,
      ingest: withCredentialsHint(handlers.ingest, options.stateDir),
      isReady: () => ready,
    });
    const pollers = startPollers(clients.sqs, resources, handlers);
    const stopRollups = startRollupTimer(clients, resources, options);
    const stopRetention = startRetentionTimer(clients, resources, options);
    const endpoints = { aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint };
    const info = stackInfo(`http://${host}:${gateway.port}`, endpoints, resources, credentials);
    writeStackInfo(options.stateDir, info);
    ready = true;

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        ready = false;
        await new Promise<void>((resolve) => {
          (gateway.server as http.Server).close(() => resolve());
          (gateway.server as http.Server).closeAllConnections();
        });
        // Drain: the batches in flight finish while the emulators still run.
        await Promise.all([...pollers.map((p) => p.stop()), stopRollups(), stopRetention()]);
        removeStackInfo(options.stateDir);
        clients.destroy();
        await cleanup();
        // Last: a line written while the emulators stop is still a readable one.
        await untap();
      })();
      return stopping;
    };
    const { sqs, sns, s3, dynamo } = clients;
    return {
      info,
      clients: { sqs, sns, s3, dynamo },
      dynamoPid: dynamoLocal.pid,
      credentialCount: store.count,
      stop,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** What `npm start` writes to its state directory for the CLIs and prints: where everything is. */
function stackInfo(
  base: string,
  endpoints: { aws: string; dynamodb: string },
  resources: LocalResources,
  credentials: { username: string; password: string },
): LocalStackInfo {
  return {
    pid: process.pid,
    webhookUrl: `${base}/webhook`,
    healthUrl: `${base}/health`,
    region: LOCAL_REGION,
    endpoints,
    tables: resources.tables,
    activityTable: resources.activityTable,
    appsTable: resources.appsTable,
    bucket: resources.bucket,
    queues: { events: resources.events, recordings: resources.recordings },
    stream: resources.stream,
    credentials,
    startedAt: new Date().toISOString(),
  };
}

/**
 * The state directory's lock, first: a second start on this state directory is refused naming the
 * first one's pid and port, even when it asks for the same port (which is then taken by that
 * first one). Then the port, and `--clean`.
 */
async function lockStateDir(options: LocalStackOptions, host: string) {
  mkdirSync(options.stateDir, { recursive: true });
  const lock = await acquireStateLock(options.stateDir, options.port);
  try {
    await assertPortFree(options.port, host);
  } catch (error) {
    lock.release();
    throw error;
  }
  if (options.clean) emptyStateDir(options.stateDir);
  return lock;
}

/** What the local stack provisions: its tables, bucket and queues. */
interface LocalResources {
  tables: TableNames;
  activityTable: string;
  appsTable: string;
  restrictApps: boolean;
  bucket: string;
  events: LocalQueue;
  recordings: LocalQueue;
  stream: LocalStream;
}

type LocalQueue = Awaited<ReturnType<typeof ensureQueuePair>>;

/**
 * The tables, the bucket and the queue pairs, from the definitions the CDK app uses (created when
 * missing, kept when there), and the allowed apps seeded as `allowedAppIds` seeds them deployed.
 */
async function provisionResources(
  { sqs, sns, s3, dynamo }: Pick<ReturnType<typeof emulatorClients>, "sqs" | "sns" | "s3" | "dynamo">,
  options: LocalStackOptions,
): Promise<LocalResources> {
  const tables = localTableNames("local");
  const retry = options.retrySeconds ?? DEFAULT_LOCAL_RETRY_SECONDS;
  await createProjectionTables(dynamo, tables);
  const activityTable = localActivityTableName("local");
  await createActivityTable(dynamo, activityTable);
  const appsTable = localAppsTableName("local");
  await createAppsTable(dynamo, appsTable);
  if (options.allowedAppIds?.length)
    await dynamoAppRegistry(documentClient(dynamo), appsTable).allow(options.allowedAppIds, "allowedAppIds");
  const bucket = "local-data";
  await ensureBucket(s3, bucket);
  return {
    tables,
    activityTable,
    appsTable,
    restrictApps: options.restrictApps ?? (options.allowedAppIds?.length ?? 0) > 0,
    bucket,
    events: await ensureQueuePair(sqs, EVENTS_QUEUE, retry),
    recordings: await ensureQueuePair(sqs, RECORDINGS_QUEUE, retry * 6),
    stream: await provisionStream(sns, sqs, options.streamSubscribers ?? []),
  };
}

/**
 * The handlers' configuration from the same builders the CDK app uses, but for the local
 * endpoints and credentials, and the recorder's local-only allowance (http and loopback file
 * servers): on here only. All three functions share this process, so their variables merge.
 */
function configureHandlers(
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
 * The counters' ledger: carried on from the last run (`stats` survives restarts), written through
 * by the functions' log lines. The last 15 minutes stay in it: the console's live flow spans a
 * restart. Returns what stops the tap.
 */
function openLedger(options: LocalStackOptions): () => Promise<void> {
  if (options.inMemory) resetStats(options.stateDir);
  else compactStats(options.stateDir, Date.now() - FLOW_WINDOW_SECONDS * 1000);
  // Every line of the functions in the state directory's log, whatever the terminal shows (none in memory).
  const log = options.inMemory ? undefined : stackLog(options.stateDir);
  const untap = tapFunctionLogs({
    mode: options.logMode ?? "readable",
    count: (entry) => {
      appendLedger(options.stateDir, entry);
      options.status?.count(entry);
    },
    log: log && ((line) => log.write(line)),
    terminal: options.status?.terminal,
  });
  return async () => {
    untap();
    await log?.close();
  };
}

/**
 * The ingest, with a local-only pointer on its 401s: where this stack's current credentials are
 * (a rotation changes them, so a pasted default pair stops working). Deployed, a 401 says nothing
 * about where credentials live.
 */
function withCredentialsHint(ingest: HttpApiHandler, stateDir: string): HttpApiHandler {
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
async function loadHandlers() {
  return {
    ingest: (await import("../../functions/ingest/handler")).handler as HttpApiHandler,
    projector: (await import("../../functions/projector/handler")).handler as SqsHandler,
    recorder: (await import("../../functions/recorder/handler")).handler as SqsHandler,
  };
}

/**
 * The two pollers that play Lambda's event source mappings. One batch at a time for events: a
 * batch of 100 is ~1,000 events/s, plenty here, and the queue's order stays the order of receipt,
 * so the simulator's duplicates (sent a few ms after their original, where a platform retry comes
 * 10 s after) never overtake it. Two downloads at once.
 */
function startPollers(
  sqs: SQSClient,
  { events, recordings }: LocalResources,
  handlers: { projector: SqsHandler; recorder: SqsHandler },
): SqsPoller[] {
  const pollers = [
    poller(sqs, EVENTS_QUEUE, events, handlers.projector, "projector", 1),
    poller(sqs, RECORDINGS_QUEUE, recordings, handlers.recorder, "recorder", 2),
  ];
  for (const p of pollers) p.start();
  return pollers;
}

/** A queue's poller, with its function's batching, receive counts and dead-letter line. */
function poller(
  sqs: SQSClient,
  definition: QueueDefinition,
  queue: LocalQueue,
  handler: SqsHandler,
  functionName: "projector" | "recorder",
  concurrency: number,
): SqsPoller {
  return new SqsPoller({
    sqs,
    queueUrl: queue.url,
    queueArn: queue.arn,
    region: LOCAL_REGION,
    handler,
    functionName,
    batchSize: definition.batchSize,
    batchingWindowMs: definition.batchingWindowSeconds * 1000,
    concurrency,
    onError: pollerError(functionName),
    maxReceiveCount: definition.maxReceiveCount,
    onDeadLetter: (message, receives) =>
      console.error(
        JSON.stringify({
          level: "WARN",
          service: functionName,
          message: `dead-lettered after ${receives} failed receives (npm run redrive brings it back)`,
          timestamp: new Date().toISOString(),
          reason: "dead-lettered",
          ...Object.fromEntries(
            ["trigger", "appId", "eventId"].map((k) => [k, message.MessageAttributes?.[k]?.StringValue]),
          ),
        }),
      ),
  });
}

/** A poller's own fault (a delete or a receive that failed), shown like a function's WARN line. */
const pollerError = (functionName: string) => (error: unknown) =>
  console.error(
    JSON.stringify({
      level: "WARN",
      service: functionName,
      message: "poller: a receive or delete failed; the messages will be received again",
      timestamp: new Date().toISOString(),
      error: errorSummary(error),
    }),
  );

/** How often the local stack applies its retention windows (S3 lifecycle and TTL run about daily deployed). */
const RETENTION_EVERY_MS = 3_600_000;

/**
 * Applies the retention windows now and every hour (none given: nothing to do), one run at a
 * time; a failed run is a WARN line. Returns what stops it (waiting for a run in progress).
 */
function startRetentionTimer(
  { s3, dynamo }: Pick<ReturnType<typeof emulatorClients>, "s3" | "dynamo">,
  { bucket, tables }: LocalResources,
  options: LocalStackOptions,
): () => Promise<void> {
  const windows = options.retention;
  if (!windows) return async () => undefined;
  const doc = documentClient(dynamo);
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = running
      .then(() => applyRetention({ s3, bucket, doc, tables }, windows, Date.now()))
      .catch((error: unknown) =>
        console.error(
          JSON.stringify({ level: "WARN", message: "retention run failed", error: errorSummary(error) }),
        ),
      );
  };
  run();
  const timer = setInterval(run, RETENTION_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** The rollup timer (`activityEveryMinutes`; off at 0), and what stops it. */
function startRollupTimer(
  { s3, dynamo }: Pick<ReturnType<typeof emulatorClients>, "s3" | "dynamo">,
  { bucket, activityTable }: LocalResources,
  options: LocalStackOptions,
): () => Promise<void> {
  if (!options.activityEveryMinutes) return async () => undefined;
  return startLocalRollups({
    s3,
    bucket,
    doc: documentClient(dynamo),
    activityTable,
    everyMs: options.activityEveryMinutes * 60_000,
    graceMs: 2 * 3_600_000,
    // The archive's window: swept by the day in its keys once a day, as the deployed schedule does.
    archiveDays: options.retention?.archiveDays,
  });
}
