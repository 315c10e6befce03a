import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { SQSClient } from "@aws-sdk/client-sqs";

/**
 * Where AWS is. In AWS every field is empty and the clients use the function's role and region;
 * the local stack, the tests and the CLIs point them at the emulators.
 */
export interface AwsClientSettings {
  /** SQS/S3 endpoint override (fauxqs locally), undefined in AWS. */
  endpoint: string | undefined;
  /** DynamoDB endpoint override (DynamoDB Local), undefined in AWS. */
  dynamoEndpoint: string | undefined;
  /** Region and credentials for the emulators (which accept any); undefined in AWS. */
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** The options every client shares: the endpoint override, region and credentials when set. */
export function clientOptions(settings: AwsClientSettings, endpoint: string | undefined) {
  return {
    ...(endpoint ? { endpoint } : {}),
    ...(settings.region ? { region: settings.region } : {}),
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
  };
}

/**
 * The SDK clients, built once at cold start (or once per CLI run). The S3 client is in
 * `s3-client.ts`, a module of its own, so that a function that loads it on first use (the
 * ingest's oversize path) does not pull it into its start-up code by importing this one.
 */
export function sqsClient(settings: AwsClientSettings): SQSClient {
  return new SQSClient(clientOptions(settings, settings.endpoint));
}

export function dynamoClient(settings: AwsClientSettings): DynamoDBClient {
  return new DynamoDBClient(clientOptions(settings, settings.dynamoEndpoint));
}

export function secretsClient(): SecretsManagerClient {
  return new SecretsManagerClient({});
}
