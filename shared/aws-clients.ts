import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { SQSClient } from "@aws-sdk/client-sqs";
import type { AwsClientSettings } from "./config";

/**
 * SDK clients for a function, built once at cold start. In AWS the settings are empty and the
 * clients use the function's role and region; the local stack points them at its emulators.
 */
export function sqsClient(settings: AwsClientSettings): SQSClient {
  return new SQSClient(settings.endpoint ? { endpoint: settings.endpoint } : {});
}

export function s3Client(settings: AwsClientSettings): S3Client {
  // The emulator serves path-style URLs without wildcard DNS.
  return new S3Client(settings.endpoint ? { endpoint: settings.endpoint, forcePathStyle: true } : {});
}

export function dynamoClient(settings: AwsClientSettings): DynamoDBClient {
  return new DynamoDBClient(settings.dynamoEndpoint ? { endpoint: settings.dynamoEndpoint } : {});
}

export function secretsClient(): SecretsManagerClient {
  return new SecretsManagerClient({});
}
