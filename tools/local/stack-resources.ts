/**
 * What the local stack provisions on the emulators, from the definitions the CDK app uses: the
 * tables, the bucket, the events and recordings queues with their DLQs, the stream's topic and
 * queues, and the allowed apps seeded. Created when missing, kept when there.
 */
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { EVENTS_QUEUE, type QueueDefinition, RECORDINGS_QUEUE } from "../../shared/platform/queues";
import type { TableNames } from "../../shared/platform/tables";
import type { emulatorClients } from "./clients";
import {
  createActivityTable,
  createAppsTable,
  createProjectionTables,
  localActivityTableName,
  localAppsTableName,
  localTableNames,
} from "./provision";
import { DEFAULT_LOCAL_RETRY_SECONDS, type LocalStackOptions } from "./stack-options";
import { type LocalStream, provisionStream } from "./stream";

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

/** What the local stack provisions: its tables, bucket and queues. */
export interface LocalResources {
  tables: TableNames;
  activityTable: string;
  appsTable: string;
  restrictApps: boolean;
  bucket: string;
  events: LocalQueue;
  recordings: LocalQueue;
  stream: LocalStream;
}

export type LocalQueue = Awaited<ReturnType<typeof ensureQueuePair>>;

/**
 * The tables, the bucket and the queue pairs, from the definitions the CDK app uses (created when
 * missing, kept when there), and the allowed apps seeded as `allowedAppIds` seeds them deployed.
 */
export async function provisionResources(
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
