/**
 * The cost bench's start: DynamoDB Local and fauxqs behind counting proxies, the queues, bucket,
 * tables and the stream's topic and subscriber, and the real ingest and projector handlers
 * configured for them as deployed (INFO logs, metrics on).
 */
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { CreateTopicCommand } from "@aws-sdk/client-sns";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { readDeploymentConfig } from "../../infra/config";
import { ingestEnvironment, projectorEnvironment } from "../../shared/config/function-environment";
import { subscribeQueue } from "../../shared/stream/subscriptions";
import { emulatorClients } from "../../tools/local/clients";
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal } from "../../tools/local/emulators";
import {
  createAppsTable,
  createProjectionTables,
  localAppsTableName,
  localTableNames,
} from "../../tools/local/provision";
import { consumedCapacityMeter } from "../capacity";
import { batchAtRate, startFauxqsProcess } from "../support";
import { countingProxy } from "./counting-proxy";
import { itemSizeMeter } from "./item-sizes";
import { RATE } from "./model";
import { deployedFrom, synthesizeStack } from "./template";

/** The emulators behind counting proxies, the queues, bucket and tables, and the real handlers wired to them. */
export async function startBench() {
  const [dynamoLocal, fauxqs] = await Promise.all([startDynamoDbLocal(), startFauxqsProcess()]);
  const aws = await countingProxy(fauxqs.endpoint);
  const tables = localTableNames("cost");
  const meter = consumedCapacityMeter(tables);
  const sizes = itemSizeMeter(tables);
  const dynamodb = await countingProxy(dynamoLocal.endpoint, meter.onAnswer, sizes.onRequest);
  const deployed = readDeploymentConfig({});
  // The default stack, synthesized: what the bill is priced with (memory, retention, fixed items).
  const synthesized = synthesizeStack();
  const direct = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
  const stop = async () => {
    direct.destroy();
    await Promise.all([aws.close(), dynamodb.close()]);
    await Promise.all([dynamoLocal.stop(), fauxqs.stop()]);
  };
  try {
    await createProjectionTables(direct.dynamo, tables);
    await direct.s3.send(new CreateBucketCommand({ Bucket: "cost" }));
    const events = await direct.sqs.send(new CreateQueueCommand({ QueueName: "cost-events" }));
    const recordings = await direct.sqs.send(new CreateQueueCommand({ QueueName: "cost-recordings" }));
    // The stream (#41): a topic with one subscriber, its unpublished queue, and the listener switch
    // (the apps table) that each run turns on or off (`measure`'s `stream`).
    const appsTable = localAppsTableName("cost");
    await createAppsTable(direct.dynamo, appsTable);
    const topicArn = (await direct.sns.send(new CreateTopicCommand({ Name: "cost-stream" }))).TopicArn ?? "";
    const subscriber = await subscribeQueue(direct.sns, direct.sqs, {
      topicArn,
      queueName: "cost-subscriber",
      rawDelivery: true,
    });
    const unpublished = await direct.sqs.send(new CreateQueueCommand({ QueueName: "cost-unpublished" }));
    const eventsQueue = {
      url: events.QueueUrl ?? "",
      arn:
        (
          await direct.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: events.QueueUrl, AttributeNames: ["QueueArn"] }),
          )
        ).Attributes?.QueueArn ?? "",
    };
    Object.assign(process.env, {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      LOCAL_AWS_ENDPOINT: aws.endpoint,
      LOCAL_DYNAMODB_ENDPOINT: dynamodb.endpoint,
      ...ingestEnvironment({
        eventsQueueUrl: eventsQueue.url,
        dataBucket: "cost",
        localCredentials: { username: "bench", password: "bench-password" },
      }),
      ...projectorEnvironment({
        tables,
        dataBucket: "cost",
        recordingsQueueUrl: recordings.QueueUrl ?? "",
        stream: {
          topicArn,
          unpublishedQueueUrl: unpublished.QueueUrl ?? "",
          alwaysOn: false,
          appsTable,
          switchCacheSeconds: 1,
        },
      }),
      POWERTOOLS_LOG_LEVEL: "INFO",
      POWERTOOLS_METRICS_NAMESPACE: "WebhookBackend",
    });
    const ingest = (await import("../../functions/ingest/handler")).handler;
    const projector = (await import("../../functions/projector/handler")).handler as (
      e: SQSEvent,
      c: Context,
    ) => Promise<SQSBatchResponse>;
    return {
      aws,
      dynamodb,
      stream: { appsTable, subscriberUrl: subscriber.queueUrl },
      meter,
      sizes,
      deployed,
      synthesized,
      template: deployedFrom(synthesized),
      direct,
      eventsQueue,
      ingest,
      projector,
      // The batches the event source forms at RATE: full at high rates, cut by the window.
      batch: batchAtRate(deployed.projectorBatchSize, deployed.projectorBatchingWindowSeconds, RATE),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export type Bench = Awaited<ReturnType<typeof startBench>>;
