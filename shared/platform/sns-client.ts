import { SNSClient } from "@aws-sdk/client-sns";
import { type AwsClientSettings, clientOptions } from "./aws-clients";

/**
 * The SNS client, in a module of its own (see `aws-clients.ts`): the projector imports it only
 * for its first publish to the stream, with a dynamic `import()`, so it is not in its start-up code.
 *
 * @example const sns = snsClient(config.aws)
 */
export function snsClient(settings: AwsClientSettings): SNSClient {
  return new SNSClient(clientOptions(settings, settings.endpoint));
}
