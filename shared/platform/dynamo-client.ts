import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type AwsClientSettings, clientOptions } from "./aws-clients";

/**
 * The DynamoDB client, built once at cold start (or once per CLI run). In a module of its own, as
 * the S3 and SQS clients are (`s3-client.ts`, `sqs-client.ts`): the ingest loads it on first use
 * (the apps table, when the deployment restricts apps), and esbuild splits a bundle by module, so
 * a shared module that held it would pull DynamoDB into the ingest's start-up code.
 */
export function dynamoClient(settings: AwsClientSettings): DynamoDBClient {
  return new DynamoDBClient(clientOptions(settings, settings.dynamoEndpoint));
}
