import { SQSClient } from "@aws-sdk/client-sqs";
import { type AwsClientSettings, clientOptions } from "./aws-clients";

/**
 * The SQS client, in a module of its own (see `aws-clients.ts`): the projector imports it only
 * for its first recording job, with a dynamic `import()`.
 *
 * @example const sqs = sqsClient(config.aws)
 */
export function sqsClient(settings: AwsClientSettings): SQSClient {
  return new SQSClient(clientOptions(settings, settings.endpoint));
}
