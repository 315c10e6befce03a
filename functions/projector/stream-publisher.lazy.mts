import type { AwsClientSettings } from "../../shared/platform/aws-clients";
import { snsClient } from "../../shared/platform/sns-client";
import type { StreamPublisher } from "../../shared/stream/publish-batches";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";

/**
 * The stream's publisher on its topic: the SNS client, loaded by the first publish
 * (`import("./stream-publisher.lazy.mjs")`) and bundled on its own (`infra/bundling.ts`), so that
 * none of its code (nor the query protocol the S3 client's barrel files reach) is in the
 * projector's start-up code.
 *
 * @example const publisher = (await import("./stream-publisher.lazy.mjs")).streamPublisher(config.aws, topicArn)
 */
export function streamPublisher(settings: AwsClientSettings, topicArn: string): StreamPublisher {
  return snsStreamPublisher(snsClient(settings), topicArn);
}
