import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";

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
 * The SDK clients, built once at cold start (or once per CLI run). The S3 and SQS clients are in
 * modules of their own (`s3-client.ts`, `sqs-client.ts`): a function that loads one on first use
 * (the ingest's oversize path, the projector's recording jobs) would otherwise pull it into its
 * start-up code by importing this module for another client.
 */
export function dynamoClient(settings: AwsClientSettings): DynamoDBClient {
  return new DynamoDBClient(clientOptions(settings, settings.dynamoEndpoint));
}

export function secretsClient(): SecretsManagerClient {
  return new SecretsManagerClient({});
}
