import { onFirstUse } from "../adapters/lazy-adapters";

/**
 * SNS's largest message: 256 KiB, the body and its attributes (names, types and values) together;
 * also the most a `PublishBatch` request may carry in all.
 */
export const SNS_MAX_MESSAGE_BYTES = 262_144;

/** SNS bills a publish by the 64 KiB chunk: a request of 100 KiB is two requests on the bill. */
export const SNS_BILLED_CHUNK_BYTES = 65_536;

/** A message as it goes to SNS: its text and the attributes filter policies read. */
export interface StreamMessage {
  /** The delivery's or the notice's id: how a failure is reported back. */
  id: string;
  body: string;
  attributes: Record<"appId" | "trigger" | "kind", string>;
}

/**
 * The bytes SNS counts for a message: its body and each attribute's name, type (`String`) and
 * value, against `SNS_MAX_MESSAGE_BYTES` and the 64 KiB billing chunks.
 *
 * @example messageBytes({ body: "{}", attributes: { appId: "a", trigger: "t", kind: "delivery" } }) // 46
 */
export function messageBytes(message: Pick<StreamMessage, "body" | "attributes">): number {
  let bytes = Buffer.byteLength(message.body);
  for (const [name, value] of Object.entries(message.attributes))
    bytes += Buffer.byteLength(name) + "String".length + Buffer.byteLength(value);
  return bytes;
}

/**
 * Whether a message fits in one SNS publish.
 *
 * @example fitsSns(streamMessage(envelope)) // false past 256 KiB: publish its body as a pointer
 */
export function fitsSns(message: Pick<StreamMessage, "body" | "attributes">): boolean {
  return messageBytes(message) <= SNS_MAX_MESSAGE_BYTES;
}

/** `PublishBatch` takes at most 10 entries. */
export const PUBLISH_BATCH_MAX_ENTRIES = 10;

/**
 * The requests SNS bills for a publish of `bytes`: one per 64 KiB chunk, at least one.
 *
 * @example billedChunks(100_000) // 2
 */
export function billedChunks(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / SNS_BILLED_CHUNK_BYTES));
}

/** One `PublishBatch` request of a plan: its messages and their bytes. */
export interface PublishRequest {
  messages: StreamMessage[];
  bytes: number;
}

type Sized = { message: StreamMessage; bytes: number };

/** Whether a request can take one more message of `bytes`. */
const fits = (request: PublishRequest, bytes: number) =>
  request.messages.length < PUBLISH_BATCH_MAX_ENTRIES && request.bytes + bytes <= SNS_MAX_MESSAGE_BYTES;

function add(requests: PublishRequest[], request: PublishRequest | undefined, { message, bytes }: Sized) {
  if (!request) requests.push({ messages: [message], bytes });
  else {
    request.messages.push(message);
    request.bytes += bytes;
  }
}

/** In the order given, each request filled until the next message does not fit. */
function inOrder(sized: readonly Sized[]): PublishRequest[] {
  const requests: PublishRequest[] = [];
  for (const m of sized) {
    const last = requests.at(-1);
    add(requests, last && fits(last, m.bytes) ? last : undefined, m);
  }
  return requests;
}

/**
 * Largest first, each into the request its chunks grow least by (then the one it fills
 * tightest); a request of its own when that grows the bill no more (`preferNew`) or when none
 * can take it.
 */
function largestFirst(sized: readonly Sized[], preferNew: boolean): PublishRequest[] {
  const requests: PublishRequest[] = [];
  for (const m of [...sized].sort((a, b) => b.bytes - a.bytes)) {
    let best: { request: PublishRequest; growth: number; slack: number } | undefined;
    for (const request of requests) {
      if (!fits(request, m.bytes)) continue;
      const total = request.bytes + m.bytes;
      const growth = billedChunks(total) - billedChunks(request.bytes);
      const slack = billedChunks(total) * SNS_BILLED_CHUNK_BYTES - total;
      if (!best || growth < best.growth || (growth === best.growth && slack < best.slack))
        best = { request, growth, slack };
    }
    const alone = billedChunks(m.bytes);
    add(
      requests,
      best && (best.growth < alone || (best.growth === alone && !preferNew)) ? best.request : undefined,
      m,
    );
  }
  return requests;
}

/**
 * Packs messages into `PublishBatch` requests (at most 10 entries and 256 KiB each) so that they
 * bill as few 64 KiB chunks as they can, then as few requests: the cheapest of three packings
 * (in the order given; largest first joining a request whenever that bills no more; largest
 * first opening one on a tie), so never more than filling requests in order. Small envelopes
 * (~1-3 KiB) fill requests of ten at one chunk each. A message over 256 KiB cannot be published
 * and is left out: the caller puts its body in the bucket first.
 *
 * @example packPublishBatches(messages).map((r) => r.messages.length) // [10, 10, 3]
 */
export function packPublishBatches(messages: readonly StreamMessage[]): PublishRequest[] {
  const sized = messages
    .map((message) => ({ message, bytes: messageBytes(message) }))
    .filter((m) => m.bytes <= SNS_MAX_MESSAGE_BYTES);
  const plans = [inOrder(sized), largestFirst(sized, false), largestFirst(sized, true)].map((plan) => ({
    plan,
    cost: planCost(plan),
  }));
  plans.sort((a, b) => a.cost.chunks - b.cost.chunks || a.cost.requests - b.cost.requests);
  return plans[0]?.plan ?? [];
}

/**
 * What a plan bills: its requests and their 64 KiB chunks.
 *
 * @example planCost(packPublishBatches(messages)) // { requests: 3, chunks: 3 }
 */
export function planCost(requests: readonly PublishRequest[]): { requests: number; chunks: number } {
  return {
    requests: requests.length,
    chunks: requests.reduce((sum, r) => sum + billedChunks(r.bytes), 0),
  };
}

/** What a publish did: the messages that could not be published (by id, with why), and what it billed. */
export interface PublishOutcome {
  failed: Map<string, unknown>;
  requests: number;
  chunks: number;
}

/**
 * Publishes messages to the stream. Resolves with the messages it could not publish after its
 * retries (never rejects for one message's failure). Adapter: `sns-publisher.ts`.
 */
export interface StreamPublisher {
  publish(messages: readonly StreamMessage[]): Promise<PublishOutcome>;
}

/**
 * A `StreamPublisher` whose adapter `load` builds at the first publish (`onFirstUse`): with a
 * dynamic `import()` in `load`, the SNS client stays out of the projector's start-up code.
 *
 * @example lazyStreamPublisher(async () => (await import("./sns-publisher")).snsStreamPublisher(client, arn))
 */
export function lazyStreamPublisher(load: () => Promise<StreamPublisher>): StreamPublisher {
  const publisher = onFirstUse(load);
  return { publish: async (messages) => (await publisher()).publish(messages) };
}
