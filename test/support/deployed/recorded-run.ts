import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { CreateTopicCommand } from "@aws-sdk/client-sns";
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { inject, vi } from "vitest";
import { APP_RECORD } from "../../../shared/apps/records";
import {
  ingestEnvironment,
  projectorEnvironment,
  reconcilerEnvironment,
  recorderEnvironment,
  rollupEnvironment,
} from "../../../shared/config/function-environment";
import { addDays, utcDay } from "../../../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../../../shared/platform/constants";
import { APPS_TABLE } from "../../../shared/platform/tables";
import { turnListenersOn } from "../../../shared/stream/listener-switch";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../tools/local/emulators";
import { webhookPostEvent } from "../../../tools/local/http-gateway";
import {
  createActivityTable,
  createAppsTable,
  createProjectionTables,
  localTableNames,
} from "../../../tools/local/provision";
import { recordFromMessage } from "../../../tools/local/sqs-event";
import { startFileServer } from "../../../tools/simulate/file-server";
import { createBucket, createQueue, testClients, uniqueName } from "../aws";
import { fixture } from "../fixtures";
import { type Answer, type RecordedCall, recordingProxy } from "./recording-proxy";

/** The five functions, by service name. */
export type FunctionName = "ingest" | "projector" | "recorder" | "reconciler" | "rollup";

/** What one function did in the run: the environment it started with, and the requests it sent. */
export interface FunctionRun {
  environment: Record<string, string | undefined>;
  calls: RecordedCall[];
}

/** A recording big enough for lib-storage's multipart upload (its part size is 5 MiB). */
const RECORDING_BYTES = 6 * 1024 * 1024;
/** The archive's retention the template sets (`EVERY_OPTION.retainArchiveDays`). */
const RETAIN_DAYS = 400;

/**
 * One short run of the pipeline through the functions' real handlers (their modules, as the
 * bundles hold them, imported with the environment `function-environment.ts` builds: the one the
 * stack gives them), each function behind a recording proxy of its own in front of fauxqs and
 * DynamoDB Local, Secrets Manager and Athena answered by the proxy (no emulator). Lambda's part is
 * played here with clients of its own (not recorded: the polling is modelled):
 * - the ingest takes six deliveries the day before (a group created, a message, a user's presence,
 *   a message whose body is over SQS's limit: the oversize path, a recording, and a group_created with no group:
 *   quarantined by the projector), its credentials from the secret, each app checked against the
 *   apps table (`allowedAppIds`);
 * - the projector drains the events queue with a listener's switch on (the stream published);
 * - the recorder drains the recordings queue (a 6 MiB recording on a host that takes the app's API
 *   key: the key secret is read, the upload is multipart);
 * - the reconciler lists the platform's users (the platform stubbed: `fetch`) and sets presence,
 *   archiving and publishing the fact that changed an item (the listener's switch on);
 * - the rollup passes yesterday (final, with the day sets) and today, compacts yesterday (the
 *   Athena stand-in writes the CTAS's file and data manifest, as Athena would), and sweeps an
 *   expired day planted 500 days back.
 */
export async function recordedRun(): Promise<Record<FunctionName, FunctionRun>> {
  const direct = testClients();
  const prefix = uniqueName("req");
  const bucket = await createBucket(direct.s3, prefix);
  const tables = localTableNames(prefix);
  const appsTable = `${prefix}-apps`;
  const activityTable = `${prefix}-activity`;
  await createProjectionTables(direct.dynamo, tables);
  await createAppsTable(direct.dynamo, appsTable);
  await createActivityTable(direct.dynamo, activityTable);
  const events = await createQueue(direct.sqs, `${prefix}-events`);
  const recordings = await createQueue(direct.sqs, `${prefix}-recordings`);
  const unpublished = await createQueue(direct.sqs, `${prefix}-unpublished`);
  const topicArn =
    (await direct.sns.send(new CreateTopicCommand({ Name: `${prefix}-stream` }))).TopicArn ?? "";
  await direct.dynamo.send(
    new PutItemCommand({
      TableName: appsTable,
      Item: {
        [APPS_TABLE.partitionKey.name]: { S: "app1" },
        [APPS_TABLE.sortKey?.name ?? "record"]: { S: APP_RECORD.allowed },
      },
    }),
  );
  await turnListenersOn(direct.dynamo, appsTable, Date.now() + 86_400_000);
  const files = await startFileServer({ host: "localhost" });

  const secrets: Record<string, string> = {
    [`${prefix}-credentials`]: JSON.stringify({ username: "req", password: "req-password" }),
    [`${prefix}-api-keys`]: JSON.stringify({ app1: "key-1" }),
  };
  const athena = athenaStandIn(direct.s3, bucket);
  const answers = {
    secretsmanager: async (_: string, input: Record<string, unknown>) => ({
      ARN: String(input.SecretId),
      Name: String(input.SecretId),
      SecretString: secrets[String(input.SecretId)],
      VersionId: "v1",
    }),
    athena: athena.answer,
  };
  const targets = { aws: inject("fauxqsEndpoint"), dynamodb: inject("dynamoEndpoint") };
  const environments: Record<FunctionName, Record<string, string | undefined>> = {
    ingest: ingestEnvironment({
      eventsQueueUrl: events,
      dataBucket: bucket,
      credentialsSecretId: `${prefix}-credentials`,
      allowedAppsTable: appsTable,
    }),
    projector: {
      ...projectorEnvironment({
        tables,
        dataBucket: bucket,
        recordingsQueueUrl: recordings,
        stream: { topicArn, unpublishedQueueUrl: unpublished, alwaysOn: false, appsTable },
      }),
    },
    recorder: {
      ...recorderEnvironment({
        sessionsTable: tables.sessions,
        dataBucket: bucket,
        apiKeysSecretId: `${prefix}-api-keys`,
        apiKeyHosts: ["localhost"],
      }),
      // The file server is on this machine, over HTTP: allowed here only.
      RECORDER_ALLOW_HTTP: "true",
      RECORDER_ALLOWED_HOSTS: "localhost",
    },
    reconciler: {
      ...reconcilerEnvironment({
        presenceTable: tables.presence,
        apiKeysSecretId: `${prefix}-api-keys`,
        apps: { app1: "us" },
        dataBucket: bucket,
      }),
      // Its changes reach the stream as the projector's do (#57 item 4: the stack adds the same).
      STREAM_TOPIC_ARN: topicArn,
      STREAM_UNPUBLISHED_QUEUE_URL: unpublished,
      APPS_TABLE: appsTable,
    },
    rollup: rollupEnvironment({
      activityTable,
      dataBucket: bucket,
      athenaWorkGroup: `${prefix}-wg`,
      glueDatabase: `${prefix}_archive`,
      graceMinutes: 120,
      archiveDays: RETAIN_DAYS,
    }),
  };
  const runs = {} as Record<FunctionName, FunctionRun>;
  /** Runs `act` as `name`: its proxy, its environment (read by its handler's module once, at import). */
  const as = async (name: FunctionName, act: () => Promise<void>) => {
    const proxy = await recordingProxy(targets, answers);
    const saved = { ...process.env };
    Object.assign(process.env, environments[name], {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      LOCAL_AWS_ENDPOINT: proxy.endpoint,
      LOCAL_DYNAMODB_ENDPOINT: proxy.endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: proxy.endpoint,
      AWS_ENDPOINT_URL_ATHENA: proxy.endpoint,
      POWERTOOLS_LOG_LEVEL: "ERROR",
      POWERTOOLS_METRICS_DISABLED: "true",
    });
    try {
      await act();
    } finally {
      process.env = saved;
      await proxy.close();
    }
    runs[name] = { environment: environments[name], calls: proxy.calls };
  };
  const context = { getRemainingTimeInMillis: () => 600_000 } as Context;
  const drain = async (queueUrl: string, handler: (e: SQSEvent, c: Context) => Promise<SQSBatchResponse>) => {
    const arn = (
      await direct.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }),
      )
    ).Attributes?.QueueArn;
    for (;;) {
      const { Messages: messages = [] } = await direct.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          MessageAttributeNames: ["All"],
          MessageSystemAttributeNames: ["All"],
        }),
      );
      if (messages.length === 0) return;
      const event = { Records: messages.map((m) => recordFromMessage(m, arn ?? "", LOCAL_REGION)) };
      const failed = new Set((await handler(event, context)).batchItemFailures.map((f) => f.itemIdentifier));
      const done = messages.filter((m) => !failed.has(m.MessageId ?? ""));
      if (done.length)
        await direct.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
    }
  };

  const yesterday = Date.now() - 86_400_000;
  try {
    await as("ingest", async () => {
      const { handler } = await import("../../../functions/ingest/handler");
      const recording = fixture("recording_generated");
      recording.data.recording_url = `${files.url.replace("127.0.0.1", "localhost")}/recordings/r-${RECORDING_BYTES}.mp4`;
      const oversize = fixture("message_sent");
      oversize.data.message.text = "x".repeat(1_100_000);
      const quarantined = fixture("group_created");
      delete quarantined.data.group;
      for (const [i, body] of [
        fixture("group_created"),
        fixture("message_sent"),
        fixture("user_connection_status_changed"),
        oversize,
        recording,
        quarantined,
      ].entries()) {
        const response = await handler(
          webhookPostEvent(JSON.stringify({ ...body, appId: "app1" }), yesterday + i, {
            username: "req",
            password: "req-password",
          }),
        );
        if (response.statusCode !== 200) throw new Error(`ingest answered ${response.statusCode}`);
      }
    });
    await as("projector", async () => {
      const { handler } = await import("../../../functions/projector/handler");
      await drain(events, handler as (e: SQSEvent, c: Context) => Promise<SQSBatchResponse>);
    });
    await as("recorder", async () => {
      const { handler } = await import("../../../functions/recorder/handler");
      await drain(recordings, handler);
    });
    await as("reconciler", async () => {
      vi.stubGlobal("fetch", async () =>
        Response.json({
          data: [{ uid: "u1", status: "online" }],
          meta: { pagination: { total_pages: 1, current_page: 1 } },
        }),
      );
      try {
        const { handler } = await import("../../../functions/reconciler/handler");
        await handler();
      } finally {
        vi.unstubAllGlobals();
      }
    });
    // An expired day (raw and edge), for the sweep; yesterday is final once its grace has passed.
    const expired = addDays(utcDay(Date.now()), -(RETAIN_DAYS + 100));
    for (const key of [
      `${S3_PREFIX.raw}date=${expired}/hour=00/old.ndjson.gz`,
      `${S3_PREFIX.edge}date=${expired}/old.ndjson.gz`,
    ])
      await direct.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x" }));
    await as("rollup", async () => {
      const { handler } = await import("../../../functions/rollup/handler");
      const startOfToday = Date.parse(`${utcDay(Date.now())}T00:00:00Z`);
      vi.useFakeTimers({
        toFake: ["Date"],
        now: Math.max(Date.now(), startOfToday + 3 * 3_600_000),
        shouldAdvanceTime: true,
      });
      try {
        await handler({}, context);
      } finally {
        vi.useRealTimers();
      }
    });
  } finally {
    await files.close();
    direct.destroy();
  }
  // A query's later calls name only its id: IAM evaluates them against its workgroup.
  for (const call of runs.rollup?.calls ?? [])
    if (call.service === "athena" && call.params.QueryExecutionId)
      call.params.WorkGroup = athena.workGroupOf(String(call.params.QueryExecutionId));
  return runs;
}

/**
 * Athena's stand-in: every query succeeds at once with no rows; a CTAS's file and data manifest
 * are written as Athena writes them (with its own credentials: not the function's requests). Keeps
 * each query's workgroup (IAM evaluates a query's later calls against it).
 */
function athenaStandIn(s3: ReturnType<typeof testClients>["s3"], bucket: string) {
  const queries = new Map<string, { workGroup: string; statement: string; manifest?: string }>();
  const answer: Answer = async (operation, input) => {
    if (operation === "StartQueryExecution") {
      const id = `q${queries.size + 1}`;
      const statement = String(input.QueryString);
      const location = /external_location = '(s3:\/\/[^']+)'/.exec(statement)?.[1];
      let manifest: string | undefined;
      if (location) {
        const file = `${location}part-00000`;
        const at = /^s3:\/\/[^/]+\/(.+)$/.exec(file)?.[1] ?? "";
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: at, Body: "PAR1" }));
        manifest = `${S3_PREFIX.athenaResults}${id}-manifest.csv`;
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: manifest, Body: `${file}\n` }));
      }
      queries.set(id, { workGroup: String(input.WorkGroup), statement, manifest });
      return { QueryExecutionId: id };
    }
    const query = queries.get(String(input.QueryExecutionId));
    if (operation === "GetQueryExecution")
      return {
        QueryExecution: {
          QueryExecutionId: input.QueryExecutionId,
          Status: { State: "SUCCEEDED" },
          StatementType: /^\s*(SELECT|WITH)/i.test(query?.statement ?? "") ? "DML" : "DDL",
          Statistics: {
            DataScannedInBytes: 0,
            ...(query?.manifest ? { DataManifestLocation: `s3://${bucket}/${query.manifest}` } : {}),
          },
        },
      };
    if (operation === "GetQueryResults")
      return { ResultSet: { ResultSetMetadata: { ColumnInfo: [] }, Rows: [] } };
    return {};
  };
  return { answer, workGroupOf: (id: string) => queries.get(id)?.workGroup };
}
