import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SNSClient } from "@aws-sdk/client-sns";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { AwsClientSettings } from "../../shared/platform/aws-clients";
import { dynamoClient } from "../../shared/platform/dynamo-client";
import { s3Client } from "../../shared/platform/s3-client";
import { snsClient } from "../../shared/platform/sns-client";
import { sqsClient } from "../../shared/platform/sqs-client";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "./emulators";

/** The SDK clients the tools use, and one call to close them. */
export interface Clients {
  sqs: SQSClient;
  /** The stream's topic (#41). */
  sns: SNSClient;
  s3: S3Client;
  dynamo: DynamoDBClient;
  destroy(): void;
}

/**
 * SDK clients for AWS (no endpoints: the default credential chain and region) or for the
 * emulators, built by the same factories the functions use (one path-style rule).
 *
 * @example const { sqs, sns, s3, dynamo, destroy } = clientsFor(emulatorSettings({ aws, dynamodb }))
 */
export function clientsFor(settings: AwsClientSettings): Clients {
  const clients = {
    sqs: sqsClient(settings),
    sns: snsClient(settings),
    s3: s3Client(settings),
    dynamo: dynamoClient(settings),
  };
  return {
    ...clients,
    destroy: () => {
      for (const client of Object.values(clients)) client.destroy();
    },
  };
}

/** Settings that point every client at the emulators (which accept any credentials). */
function emulatorSettings(endpoints: { aws?: string; dynamodb?: string }): AwsClientSettings {
  return {
    endpoint: endpoints.aws,
    dynamoEndpoint: endpoints.dynamodb,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  };
}

/** Clients for the emulators at these endpoints. */
export function emulatorClients(endpoints: { aws?: string; dynamodb?: string }): Clients {
  return clientsFor(emulatorSettings(endpoints));
}
