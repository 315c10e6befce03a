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

/** The Secrets Manager client (the S3, SQS and DynamoDB clients are in modules of their own). */
export function secretsClient(): SecretsManagerClient {
  return new SecretsManagerClient({});
}
