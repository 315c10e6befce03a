import { mkdirSync, rmSync } from "node:fs";
import type http from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import {
  ingestEnvironment,
  projectorEnvironment,
  recorderEnvironment,
} from "../../shared/platform/environment";
import {
  EVENTS_QUEUE,
  type QueueDefinition,
  RECORDINGS_QUEUE,
  VISIBILITY_FACTOR,
} from "../../shared/platform/queues";
import { emulatorClients } from "./clients";
import {
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  type RunningEmulator,
  startDynamoDbLocal,
  startFauxqsEmulator,
} from "./emulators";
import { type HttpApiHandler, startGateway } from "./http-gateway";
import { type LogMode, tapFunctionLogs } from "./log-tap";
import { type SqsHandler, SqsPoller } from "./poller";
import { createProjectionTables, localTableNames } from "./provision";
import { restoreSnapshot, saveSnapshot } from "./snapshot";
import { type LocalStackInfo, removeStackInfo, writeStackInfo, writeStats } from "./state";

/** Development defaults, printed at start and documented in the README. Never used in AWS. */
export const DEV_USERNAME = "local-webhook";
export const DEV_PASSWORD = "local-password-change-me";

export interface LocalStackOptions {
  port: number;
  host?: string;
  stateDir: string;
  /** Keep nothing on disk (DynamoDB Local in memory, no snapshot). */
  inMemory?: boolean;
  /** Start from empty tables and bucket. */
  clean?: boolean;
  username?: string;
  password?: string;
  logMode?: LogMode;
  /**
   * `local` (default): the recorder may fetch over http and from loopback, so the simulator's file
   * server works. `deployed`: the policy AWS runs (https only, public addresses only).
   */
  recordingPolicy?: "local" | "deployed";
  /** App ids the ingest accepts (as the `allowedAppIds` context key deployed). @default - any */
  allowedAppIds?: readonly string[];
  /** Emulator ports (default: free ones). */
  dynamoPort?: number;
  fauxqsPort?: number;
}

export interface LocalStack {
  info: LocalStackInfo;
  clients: { sqs: SQSClient; s3: S3Client; dynamo: DynamoDBClient };
  /** The DynamoDB Local process id (tests check it is gone after stop). */
  dynamoPid: number | undefined;
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

async function createQueuePair(sqs: SQSClient, definition: QueueDefinition) {
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${definition.name}-dlq`,
      Attributes: { MessageRetentionPeriod: String(14 * 86400) },
    }),
  );
  const dlqArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }))
  ).Attributes?.QueueArn;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: definition.name,
      Attributes: {
        VisibilityTimeout: String(definition.consumerTimeoutSeconds * VISIBILITY_FACTOR),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn,
          maxReceiveCount: String(definition.maxReceiveCount),
        }),
      },
    }),
  );
  const arn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ["QueueArn"] }))
  ).Attributes?.QueueArn;
  return { url: queue.QueueUrl ?? "", arn: arn ?? "", deadLetterUrl: dlq.QueueUrl ?? "" };
}

/**
 * Starts the whole pipeline on this machine: DynamoDB Local and fauxqs, the tables, queues, DLQs
 * and bucket from the definitions the CDK app uses, the real handlers behind a local API Gateway
 * and two pollers that play Lambda's SQS event source mappings. One stack per process (the
 * handlers read their configuration once, when first imported).
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const host = options.host ?? "127.0.0.1";
  await assertPortFree(options.port, host);
  mkdirSync(options.stateDir, { recursive: true });
  const dbPath = join(options.stateDir, "dynamodb");
  if (options.clean) rmSync(options.stateDir, { recursive: true, force: true });
  if (!options.inMemory) mkdirSync(dbPath, { recursive: true });

  const started: RunningEmulator[] = [];
  const cleanup = async () => {
    await Promise.allSettled(started.map((e) => e.stop()));
  };
  try {
    const [dynamoLocal, fauxqs] = await Promise.all([
      startDynamoDbLocal({ port: options.dynamoPort, dbPath: options.inMemory ? undefined : dbPath }).then(
        (e) => {
          started.push(e);
          return e;
        },
      ),
      startFauxqsEmulator({ port: options.fauxqsPort }).then((e) => {
        started.push(e);
        return e;
      }),
    ]);
    const clients = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
    const { sqs, s3, dynamo } = clients;

    const tables = localTableNames("local");
    const bucket = "local-data";
    await createProjectionTables(dynamo, tables);
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const events = await createQueuePair(sqs, EVENTS_QUEUE);
    const recordings = await createQueuePair(sqs, RECORDINGS_QUEUE);
    if (!options.inMemory) await restoreSnapshot(options.stateDir, s3, bucket, sqs);

    const username = options.username ?? DEV_USERNAME;
    const password = options.password ?? DEV_PASSWORD;
    // The handlers' configuration from the same builders the CDK app uses, but for the local
    // endpoints and credentials, and the recorder's local-only allowance (http and loopback file
    // servers): on here only. All three functions share this process, so their variables merge.
    Object.assign(process.env, {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      LOCAL_AWS_ENDPOINT: fauxqs.endpoint,
      LOCAL_DYNAMODB_ENDPOINT: dynamoLocal.endpoint,
      ...ingestEnvironment({
        eventsQueueUrl: events.url,
        dataBucket: bucket,
        localCredentials: { username, password },
        allowedAppIds: options.allowedAppIds ?? [],
      }),
      ...projectorEnvironment({ tables, dataBucket: bucket, recordingsQueueUrl: recordings.url }),
      ...recorderEnvironment({ sessionsTable: tables.sessions, dataBucket: bucket }),
      ...(options.recordingPolicy === "deployed"
        ? { RECORDER_ALLOW_HTTP: "false", RECORDER_ALLOWED_HOSTS: "" }
        : { RECORDER_ALLOW_HTTP: "true", RECORDER_ALLOWED_HOSTS: "127.0.0.1,localhost,::1" }),
      POWERTOOLS_METRICS_DISABLED: "true",
    });
    const tap = tapFunctionLogs(options.logMode ?? "readable");
    const ingest = (await import("../../functions/ingest/handler")).handler as HttpApiHandler;
    const projector = (await import("../../functions/projector/handler")).handler as SqsHandler;
    const recorder = (await import("../../functions/recorder/handler")).handler as SqsHandler;

    let ready = false;
    const gateway = await startGateway({ port: options.port, host, ingest, isReady: () => ready });
    const pollers = [
      new SqsPoller({
        sqs,
        queueUrl: events.url,
        queueArn: events.arn,
        region: LOCAL_REGION,
        handler: projector,
        functionName: "projector",
        batchSize: EVENTS_QUEUE.batchSize,
        batchingWindowMs: EVENTS_QUEUE.batchingWindowSeconds * 1000,
        concurrency: 2,
      }),
      new SqsPoller({
        sqs,
        queueUrl: recordings.url,
        queueArn: recordings.arn,
        region: LOCAL_REGION,
        handler: recorder,
        functionName: "recorder",
        batchSize: RECORDINGS_QUEUE.batchSize,
        batchingWindowMs: RECORDINGS_QUEUE.batchingWindowSeconds * 1000,
        concurrency: 2,
      }),
    ];
    for (const p of pollers) p.start();
    const statsTimer = setInterval(() => writeStats(options.stateDir, tap.stats), 2000);

    const base = `http://${host}:${gateway.port}`;
    const info: LocalStackInfo = {
      pid: process.pid,
      webhookUrl: `${base}/webhook`,
      healthUrl: `${base}/health`,
      region: LOCAL_REGION,
      endpoints: { aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint },
      tables,
      bucket,
      queues: { events, recordings },
      credentials: { username, password },
      startedAt: new Date().toISOString(),
    };
    writeStackInfo(options.stateDir, info);
    ready = true;

    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        ready = false;
        clearInterval(statsTimer);
        await new Promise<void>((resolve) => {
          (gateway.server as http.Server).close(() => resolve());
          (gateway.server as http.Server).closeAllConnections();
        });
        await Promise.all(pollers.map((p) => p.stop()));
        writeStats(options.stateDir, tap.stats);
        if (!options.inMemory) {
          await saveSnapshot(options.stateDir, s3, bucket, sqs, [
            events.url,
            events.deadLetterUrl,
            recordings.url,
            recordings.deadLetterUrl,
          ]);
        }
        removeStackInfo(options.stateDir);
        tap.restore();
        clients.destroy();
        await cleanup();
      })();
      return stopping;
    };
    return { info, clients: { sqs, s3, dynamo }, dynamoPid: dynamoLocal.pid, stop };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
