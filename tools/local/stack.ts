/**
 * The local stack's start and stop: each step in order (the state directory, the emulators, the
 * resources, the handlers, the gateway, the pollers and timers), then `stack.json` for the CLIs;
 * stop undoes them in reverse, draining the batches in flight first.
 */
import type http from "node:http";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SNSClient } from "@aws-sdk/client-sns";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { webhookPath } from "../../shared/platform/webhook-path";
import { emulatorClients } from "./clients";
import { ensureCredentialStore } from "./credentials-store";
import { LOCAL_REGION, type RunningEmulator } from "./emulators";
import { startGateway } from "./http-gateway";
import { configureHandlers, loadHandlers, withCredentialsHint } from "./stack-handlers";
import { DEV_PASSWORD, DEV_USERNAME, type LocalStackOptions } from "./stack-options";
import { startPollers } from "./stack-pollers";
import { type LocalResources, provisionResources } from "./stack-resources";
import { lockStateDir, openLedger, startEmulators } from "./stack-state-dir";
import { startRetentionTimer, startRollupTimer } from "./stack-timers";
import { type LocalStackInfo, removeStackInfo, writeStackInfo } from "./state";

export interface LocalStack {
  info: LocalStackInfo;
  clients: { sqs: SQSClient; sns: SNSClient; s3: S3Client; dynamo: DynamoDBClient };
  /** The DynamoDB Local process id (tests check it is gone after stop). */
  dynamoPid: number | undefined;
  /** How many credentials its store holds (`info.credentials` is the current one): the banner says where the others are. */
  credentialCount: number;
  stop(): Promise<void>;
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
      pathToken: options.webhookPathToken,
    });
    const pollers = startPollers(clients.sqs, resources, handlers);
    const stopRollups = startRollupTimer(clients, resources, options);
    const stopRetention = startRetentionTimer(clients, resources, options);
    const endpoints = { aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint };
    const info = stackInfo(`http://${host}:${gateway.port}`, endpoints, resources, credentials, {
      pathToken: options.webhookPathToken,
    });
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
  { pathToken }: { pathToken?: string } = {},
): LocalStackInfo {
  return {
    pid: process.pid,
    webhookUrl: `${base}${webhookPath(pathToken)}`,
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
