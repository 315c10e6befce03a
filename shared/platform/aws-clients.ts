import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
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

function common(settings: AwsClientSettings, endpoint: string | undefined) {
  return {
    ...(endpoint ? { endpoint } : {}),
    ...(settings.region ? { region: settings.region } : {}),
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
  };
}

/** The SDK clients, built once at cold start (or once per CLI run). */
export function sqsClient(settings: AwsClientSettings): SQSClient {
  return new SQSClient(common(settings, settings.endpoint));
}

export function s3Client(settings: AwsClientSettings): S3Client {
  // An emulator serves path-style URLs (no wildcard DNS for virtual-hosted buckets).
  return new S3Client({
    ...common(settings, settings.endpoint),
    ...(settings.endpoint ? { forcePathStyle: true } : {}),
  });
}

export function dynamoClient(settings: AwsClientSettings): DynamoDBClient {
  return new DynamoDBClient(common(settings, settings.dynamoEndpoint));
}

export function secretsClient(): SecretsManagerClient {
  return new SecretsManagerClient({});
}
