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

/**
 * What the stream's two destinations share (the topic: `sns-publisher.ts`; one subscriber's queue:
 * `queue-publisher.ts`): messages packed into batch requests of at most 10 entries and 256 KiB
 * (`packPublishBatches`: as few billed 64 KiB chunks as they fit), sent in parallel, the entries
 * the service failed on its side and the requests that failed whole retried with a doubling wait.
 */

export interface BatchPublisherOptions {
  /** Rounds of publishing: the first, then retries of the entries the service failed on its side. @default 3 */
  attempts?: number;
  /** The wait before the first retry, doubled for each next one (ms). @default 100 */
  backoffMs?: number;
  /** Batch requests in flight at once. @default 8 */
  concurrency?: number;
  /** How a retry waits (tests pass one that does not). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * One batch request's answer per entry, in the order sent: `undefined` when it was taken, else
 * why not (`retryable` when the service failed it on its side).
 */
export type SendBatch = (
  messages: readonly StreamMessage[],
) => Promise<Array<StreamPublishError | undefined>>;

/**
 * A message's attributes as both services take them: each a `String` attribute.
 *
 * @example stringAttributes(message).kind // { DataType: "String", StringValue: "delivery" }
 */
export function stringAttributes(
  message: StreamMessage,
): Record<string, { DataType: "String"; StringValue: string }> {
  return Object.fromEntries(
    Object.entries(message.attributes).map(([name, value]) => [
      name,
      { DataType: "String", StringValue: value },
    ]),
  );
}

/**
 * Whether a whole request's failure may pass if sent again: anything but a fault of the request
 * itself (throttling and the service's own faults are retried; a missing topic or queue, or a
 * denied call, is not).
 */
function retryableRequestError(error: unknown): boolean {
  const { $fault, name } = error as { $fault?: string; name?: string };
  return $fault !== "client" || /throttl/i.test(name ?? "");
}

/**
 * A `StreamPublisher` over one batch request (`send`, named `requestName` in its errors): up to
 * `attempts` rounds; an entry refused as sent, or one over 256 KiB, fails at once. Resolves with
 * what it could not publish, never rejects for a message's failure.
 *
 * @example batchPublisher("PublishBatch", async (messages) => …, { attempts: 3 })
 */
export function batchPublisher(
  requestName: string,
  send: SendBatch,
  options: BatchPublisherOptions = {},
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
                const answers = await send(request.messages);
                request.messages.forEach((m, i) => {
                  const error = answers[i];
                  if (error) fail(m, error);
                });
              } catch (error) {
                const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
                for (const m of request.messages)
                  fail(
                    m,
                    new StreamPublishError(`${requestName} failed: ${why}`, retryableRequestError(error), {
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

/**
 * The answers of a batch request that reports `Successful` and `Failed` entries by their `Id`
 * (the entry's index as sent), as `PublishBatch` and `SendMessageBatch` both do: an entry in
 * neither list is one the service did not answer for (retried).
 *
 * @example entryAnswers(3, out.Successful, out.Failed, "SNS")
 */
export function entryAnswers(
  count: number,
  successful: ReadonlyArray<{ Id?: string }> | undefined,
  failed: ReadonlyArray<{ Id?: string; Code?: string; Message?: string; SenderFault?: boolean }> | undefined,
  service: string,
): Array<StreamPublishError | undefined> {
  const ok = new Set((successful ?? []).map((s) => s.Id));
  const refused = new Map((failed ?? []).map((f) => [f.Id, f]));
  return Array.from({ length: count }, (_, i) => {
    if (ok.has(String(i))) return undefined;
    const f = refused.get(String(i));
    return new StreamPublishError(
      f
        ? `${service} failed the entry: ${f.Code}: ${f.Message ?? ""}`
        : `${service} did not answer for the entry`,
      f?.SenderFault !== true,
    );
  });
}
