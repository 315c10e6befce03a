import { type MessageAttributeValue, PublishBatchCommand, type SNSClient } from "@aws-sdk/client-sns";
import pLimit from "p-limit";
import { StreamPublishError } from "../platform/errors";
import {
  billedChunks,
  fitsSns,
  type PublishOutcome,
  packPublishBatches,
  SNS_MAX_MESSAGE_BYTES,
  type StreamMessage,
  type StreamPublisher,
} from "./publish-batches";

export interface SnsPublisherOptions {
  /** Rounds of publishing: the first, then retries of the entries SNS failed on its side. @default 3 */
  attempts?: number;
  /** The wait before the first retry, doubled for each next one (ms). @default 100 */
  backoffMs?: number;
  /** `PublishBatch` requests in flight at once. @default 8 */
  concurrency?: number;
  /** How a retry waits (tests pass one that does not). */
  sleep?: (ms: number) => Promise<void>;
}

const attributesOf = (message: StreamMessage): Record<string, MessageAttributeValue> =>
  Object.fromEntries(
    Object.entries(message.attributes).map(([name, value]) => [
      name,
      { DataType: "String", StringValue: value },
    ]),
  );

/**
 * Whether a whole request's failure may pass if sent again: anything but a fault of the request
 * itself (throttling and SNS's own faults are retried; a missing topic or a denied call is not).
 */
function retryableRequestError(error: unknown): boolean {
  const { $fault, name } = error as { $fault?: string; name?: string };
  return $fault !== "client" || /throttl/i.test(name ?? "");
}

/**
 * The stream on an SNS topic: messages packed into `PublishBatch` requests
 * (`packPublishBatches`), sent in parallel; the entries SNS failed on its side (`SenderFault`
 * false: throttling, an internal error) and the requests that failed whole are retried, up to
 * `attempts` rounds with a doubling wait. An entry SNS refuses as sent (`SenderFault`), or one
 * over 256 KiB, fails at once. Takes its client (tests and the local stack pass one for fauxqs).
 *
 * @example const outcome = await snsStreamPublisher(snsClient(config.aws), topicArn).publish(messages)
 */
export function snsStreamPublisher(
  client: SNSClient,
  topicArn: string,
  options: SnsPublisherOptions = {},
): StreamPublisher {
  const attempts = options.attempts ?? 3;
  const backoffMs = options.backoffMs ?? 100;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const limit = pLimit(options.concurrency ?? 8);
  return {
    async publish(messages) {
      const outcome: PublishOutcome = { failed: new Map(), requests: 0, chunks: 0 };
      let pending = messages.filter((m) => {
        if (!fitsSns(m))
          outcome.failed.set(
            m.id,
            new StreamPublishError(`over SNS's ${SNS_MAX_MESSAGE_BYTES} bytes`, false),
          );
        return fitsSns(m);
      });
      for (let attempt = 1; pending.length > 0; attempt++) {
        const again: StreamMessage[] = [];
        const fail = (message: StreamMessage, error: StreamPublishError) => {
          if (error.retryable && attempt < attempts) again.push(message);
          else outcome.failed.set(message.id, error);
        };
        const requests = packPublishBatches(pending);
        outcome.requests += requests.length;
        outcome.chunks += requests.reduce((sum, r) => sum + billedChunks(r.bytes), 0);
        await Promise.all(
          requests.map((request) =>
            limit(async () => {
              try {
                const out = await client.send(
                  new PublishBatchCommand({
                    TopicArn: topicArn,
                    PublishBatchRequestEntries: request.messages.map((m, i) => ({
                      Id: String(i),
                      Message: m.body,
                      MessageAttributes: attributesOf(m),
                    })),
                  }),
                );
                const ok = new Set((out.Successful ?? []).map((s) => s.Id));
                const refused = new Map((out.Failed ?? []).map((f) => [f.Id, f]));
                request.messages.forEach((m, i) => {
                  if (ok.has(String(i))) return;
                  const f = refused.get(String(i));
                  fail(
                    m,
                    new StreamPublishError(
                      f
                        ? `SNS failed the entry: ${f.Code}: ${f.Message ?? ""}`
                        : "SNS did not answer for the entry",
                      f?.SenderFault !== true,
                    ),
                  );
                });
              } catch (error) {
                const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
                for (const m of request.messages)
                  fail(
                    m,
                    new StreamPublishError(`PublishBatch failed: ${why}`, retryableRequestError(error), {
                      cause: error,
                    }),
                  );
              }
            }),
          ),
        );
        pending = again;
        if (pending.length > 0) await sleep(backoffMs * 2 ** (attempt - 1));
      }
      return outcome;
    },
  };
}
