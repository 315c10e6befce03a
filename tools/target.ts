import { CloudFormationClient, DescribeStacksCommand } from "@aws-sdk/client-cloudformation";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SNSClient } from "@aws-sdk/client-sns";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { byTable, PROJECTION_TABLE_NAMES, type TableNames, tableOutput } from "../shared/platform/tables";
import { STREAM_OUTPUTS, subscriberOutputs } from "../shared/stream/subscribers";
import { clientsFor, emulatorClients } from "./local/clients";
import { localActivityTableName } from "./local/provision";
import { readStackInfo, stateDir } from "./local/state";

/**
 * Where the operations commands (query, redrive, replay) point: the running local stack by
 * default, or a deployed stack by name (its CloudFormation outputs), or explicit table names.
 */
export interface Target {
  kind: "local" | "aws";
  tables: TableNames;
  bucket?: string;
  queues?: Record<"events" | "recordings", { url: string; deadLetterUrl: string }>;
  /** The deployed stack's per-app API-keys secret, when it has one. */
  apiKeysSecretArn?: string;
  /** The deployed stack's import secret (#43: each app's import address and key; no function reads it). */
  importApiKeysSecretArn?: string;
  dynamo: DynamoDBClient;
  s3: S3Client;
  sqs: SQSClient;
  sns: SNSClient;
  stackName?: string;
  /** The activity table and the engine SQL over the archive runs on (#20). */
  activityTable?: string;
  athena?: { workGroup: string; database: string };
  /** The apps table (per-app settings, the stream's listener switch). */
  appsTable?: string;
  /** The stream of facts (#41): its topic, its unpublished queue and its declared subscribers' queues (name → URL). */
  stream?: { topicArn: string; unpublishedUrl?: string; subscribers: Record<string, string> };
  destroy(): void;
}

export interface TargetOptions {
  stack?: string;
  tables?: string;
  stateDir?: string;
}

/** What `--tables` takes: `groups=…,memberships=…,…`, a name for every projection table. */
export const TABLES_SPEC = PROJECTION_TABLE_NAMES.map((name) => `${name}=…`).join(",");

function parseTables(spec: string): TableNames {
  const entries: Record<string, string | undefined> = Object.fromEntries(
    spec.split(",").map((pair) => pair.split("=").map((s) => s.trim())),
  );
  if (PROJECTION_TABLE_NAMES.some((name) => !entries[name])) throw new Error(`--tables needs ${TABLES_SPEC}`);
  return byTable((name) => entries[name] ?? "");
}

/**
 * The declared subscribers' queues among a stack's outputs (`subscriberOutputs`), by name: each
 * output `StreamSubscriber<Name>QueueUrl` read back to its subscriber's name.
 *
 * @example subscriberQueues({ StreamSubscriberCrmSyncQueueUrl: "https://…" }) // { "crm-sync": "https://…" }
 */
export function subscriberQueues(outputs: Readonly<Record<string, string>>): Record<string, string> {
  const queues: Record<string, string> = {};
  for (const [key, url] of Object.entries(outputs)) {
    const id = /^StreamSubscriber([A-Za-z0-9]+)QueueUrl$/.exec(key)?.[1];
    if (!id) continue;
    const name = id.replace(/(?<=.)([A-Z])/g, "-$1").toLowerCase();
    if (subscriberOutputs(name).queueUrl === key) queues[name] = url;
  }
  // `…DeadLetterQueueUrl` reads as a subscriber named `<name>-dead-letter`: it is `<name>`'s DLQ.
  for (const name of Object.keys(queues)) {
    const owner = name.replace(/-dead-letter$/, "");
    if (owner !== name && queues[owner] !== undefined) delete queues[name];
  }
  return queues;
}

export async function resolveTarget(options: TargetOptions): Promise<Target> {
  if (options.stack) {
    const cfn = new CloudFormationClient({});
    const out = await cfn.send(new DescribeStacksCommand({ StackName: options.stack }));
    cfn.destroy();
    const outputs = Object.fromEntries(
      (out.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue ?? ""]),
    );
    return {
      ...clientsFor({ endpoint: undefined, dynamoEndpoint: undefined }),
      kind: "aws",
      stackName: options.stack,
      tables: byTable((name) => outputs[tableOutput(name)] ?? ""),
      bucket: outputs.DataBucket,
      apiKeysSecretArn: outputs.RecordingApiKeysSecret || undefined,
      importApiKeysSecretArn: outputs.ImportApiKeysSecret || undefined,
      activityTable: outputs.ActivityTable || undefined,
      ...(outputs.AthenaWorkGroup && outputs.GlueDatabase
        ? { athena: { workGroup: outputs.AthenaWorkGroup, database: outputs.GlueDatabase } }
        : {}),
      appsTable: outputs.AppsTable || undefined,
      ...(outputs[STREAM_OUTPUTS.topicArn]
        ? {
            stream: {
              topicArn: outputs[STREAM_OUTPUTS.topicArn],
              unpublishedUrl: outputs[STREAM_OUTPUTS.unpublishedQueueUrl] || undefined,
              subscribers: subscriberQueues(outputs),
            },
          }
        : {}),
      queues: {
        events: { url: outputs.EventsQueueUrl ?? "", deadLetterUrl: outputs.EventsDeadLetterQueueUrl ?? "" },
        recordings: {
          url: outputs.RecordingsQueueUrl ?? "",
          deadLetterUrl: outputs.RecordingsDeadLetterQueueUrl ?? "",
        },
      },
    };
  }
  if (options.tables)
    return {
      ...clientsFor({ endpoint: undefined, dynamoEndpoint: undefined }),
      kind: "aws",
      tables: parseTables(options.tables),
    };
  const info = readStackInfo(stateDir(options.stateDir));
  return {
    ...emulatorClients(info.endpoints),
    kind: "local",
    tables: info.tables,
    bucket: info.bucket,
    queues: info.queues,
    activityTable: info.activityTable ?? localActivityTableName("local"),
    appsTable: info.appsTable,
    ...(info.stream
      ? {
          stream: {
            topicArn: info.stream.topicArn,
            unpublishedUrl: info.stream.unpublished.url,
            subscribers: Object.fromEntries(
              Object.entries(info.stream.subscribers).map(([name, queues]) => [name, queues.url]),
            ),
          },
        }
      : {}),
  };
}
