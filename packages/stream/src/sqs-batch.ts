import type { DeliveryEnvelope, ErasureNotice } from "./envelope.ts";
import { parseStreamMessage } from "./envelope.ts";

/**
 * An SQS batch helper for a Lambda function subscribed to a stream queue, in the style of
 * Powertools' batch processing (`processPartialResponse`): each record is handled on its own and
 * the function returns the records that failed (`batchItemFailures`), so that only those come
 * back (the event source mapping needs `ReportBatchItemFailures`). No AWS client: it takes the
 * event Lambda gives.
 *
 * - A record that is not a stream message is a failure: after the queue's receives it goes to its
 *   dead-letter queue.
 * - Duplicates by delivery id (`envelope.id`: an SQS redelivery, a redrive or a replay carries the
 *   same id): within a batch, a second record of an id is handled as its first was (never twice);
 *   across batches, an id `handled` holds is skipped. `handled` is a `DeliveryIdStore`: by default
 *   `memoryDeliveryIdStore()`, kept for the processor's life (a warm Lambda container's, so a
 *   duplicate reaching another container or a cold start is handled again); give a durable one
 *   (a DynamoDB conditional put) for exactly-once effects across containers.
 * - Erasure notices applied: a whole app's erasure (`scope: "app"`) is acted on first, and every
 *   delivery of the app received before the erasure ended is dropped from then on (in the
 *   notice's batch and any later batch of this processor), reported as handled; one user's
 *   erasure goes to `onErasure` after the batch's deliveries.
 */

/** The part of an SQS record the helper reads (`SQSRecord` of `@types/aws-lambda` fits). */
export interface StreamQueueRecord {
  messageId: string;
  body: string;
}

/** The SQS event a Lambda function receives (`SQSEvent` fits). */
export interface StreamQueueEvent {
  Records: readonly StreamQueueRecord[];
}

/** What the function returns: the records to receive again (`SQSBatchResponse`). */
export interface StreamBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** Delivery ids already handled, across batches. */
export interface DeliveryIdStore {
  has(id: string): boolean | Promise<boolean>;
  add(id: string): void | Promise<void>;
}

/**
 * Delivery ids in memory, the most recent `capacity` kept (the oldest forgotten first).
 *
 * @example streamBatchProcessor({ onDelivery, handled: memoryDeliveryIdStore(50_000) })
 */
export function memoryDeliveryIdStore(capacity = 10_000): DeliveryIdStore {
  const ids = new Set<string>();
  return {
    has: (id) => ids.has(id),
    add(id) {
      ids.delete(id);
      ids.add(id);
      for (const oldest of ids) {
        if (ids.size <= capacity) break;
        ids.delete(oldest);
      }
    },
  };
}

export interface StreamBatchOptions<R extends StreamQueueRecord> {
  /** Your reaction to one delivery; a throw fails its record (and its duplicates in the batch). */
  onDelivery: (envelope: DeliveryEnvelope, record: R) => Promise<void>;
  /** Your erasure of what you derived; a throw fails the notice's record. */
  onErasure?: (notice: ErasureNotice, record: R) => Promise<void>;
  /** Delivery ids handled in earlier batches. @default memoryDeliveryIdStore() */
  handled?: DeliveryIdStore;
}

/**
 * A batch handler for a stream queue's event source mapping.
 *
 * @example export const handler = streamBatchProcessor({ onDelivery: async (d) => { … } })
 */
export function streamBatchProcessor<R extends StreamQueueRecord>(
  options: StreamBatchOptions<R>,
): (event: { Records: readonly R[] }) => Promise<StreamBatchResponse> {
  const handled = options.handled ?? memoryDeliveryIdStore();
  /** The apps erased whole, and when their erasure ended. */
  const erasedApps = new Map<string, number>();
  const dropped = (d: DeliveryEnvelope) =>
    d.receivedAt <= (erasedApps.get(d.appId ?? "") ?? Number.NEGATIVE_INFINITY);

  return async (event) => {
    const failed = new Set<string>();
    const deliveries: { record: R; envelope: DeliveryEnvelope }[] = [];
    const notices: { record: R; envelope: ErasureNotice }[] = [];
    for (const record of event.Records) {
      try {
        const envelope = parseStreamMessage(record.body);
        if (envelope.kind === "delivery") deliveries.push({ record, envelope });
        else notices.push({ record, envelope });
      } catch {
        failed.add(record.messageId);
      }
    }
    for (const { envelope } of notices)
      if (envelope.scope === "app")
        erasedApps.set(envelope.appId, Math.max(envelope.finishedAt, erasedApps.get(envelope.appId) ?? 0));
    /** Each delivery id's outcome in this batch: a copy shares its first record's. */
    const outcomes = new Map<string, Promise<boolean>>();
    for (const { record, envelope } of deliveries) {
      if (dropped(envelope)) continue;
      let outcome = outcomes.get(envelope.id);
      if (!outcome) {
        outcome = handleOnce(envelope, record);
        outcomes.set(envelope.id, outcome);
      }
      if (!(await outcome)) failed.add(record.messageId);
    }
    for (const { record, envelope } of notices) {
      try {
        await options.onErasure?.(envelope, record);
      } catch {
        failed.add(record.messageId);
      }
    }
    return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
  };

  async function handleOnce(envelope: DeliveryEnvelope, record: R): Promise<boolean> {
    try {
      if (await handled.has(envelope.id)) return true;
      await options.onDelivery(envelope, record);
      await handled.add(envelope.id);
      return true;
    } catch {
      return false;
    }
  }
}
