import type { DeliveryEnvelope, ErasureNotice, FactEnvelope, ReconcileFact } from "./envelope.ts";
import { parseStreamMessage, UnknownStreamMessageError } from "./envelope.ts";
import {
  type AppErasures,
  actedOn,
  type ErasureStateStore,
  erasedBefore,
  handledKey,
  memoryErasureState,
} from "./erasure-state.ts";

/**
 * An SQS batch helper for a Lambda function subscribed to a stream queue, in the style of
 * Powertools' batch processing (`processPartialResponse`): each record is handled on its own and
 * the function returns the records that failed (`batchItemFailures`), so that only those come
 * back (the event source mapping needs `ReportBatchItemFailures`). No AWS client: it takes the
 * event Lambda gives.
 *
 * - A record that is not a stream message is a failure: after the queue's receives it goes to its
 *   dead-letter queue. A well-formed message of a kind (or `schemaVersion`) this package does not
 *   know, a later contract's, is skipped and reported (`onSkipped`), never failed: an upgrade of
 *   the backend does not fill your dead-letter queue.
 * - Reconcile facts (`kind: "reconcile"`: presence reconcile observed and applied to the tables)
 *   go to `onReconcile`; without it they are skipped and reported.
 * - Duplicates by delivery id (`envelope.id`: an SQS redelivery, a redrive or a replay carries the
 *   same id): within a batch, a second record of an id is handled as its first was (never twice);
 *   across batches, an id `handled` holds is skipped. `handled` is a `DeliveryIdStore`: by default
 *   `memoryDeliveryIdStore()`, kept for the processor's life (a warm Lambda container's, so a
 *   duplicate reaching another container or a cold start is handled again); give a durable one
 *   (a DynamoDB conditional put) for exactly-once effects across containers. The id is stored with
 *   the latest erasure notice of its app acted on (`handledKey`): after an erasure, the replay that
 *   rebuilds a copy (the same ids) is handled again, once.
 * - Erasure notices applied: a whole app's erasure (`scope: "app"`) is acted on first, and every
 *   delivery of the app received before the erasure ended is dropped from then on (in the
 *   notice's batch and any later batch), reported as handled; one user's erasure goes to
 *   `onErasure` after the batch's deliveries. What was acted on is kept in `erasures` (an
 *   `ErasureStateStore`: in memory by default; durable, like `handled`, to outlive a cold start).
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

/** A message the processor skipped, and why (`onSkipped`). */
export interface SkippedStreamMessage {
  kind: string;
  schemaVersion: number;
  id?: string;
  reason: string;
}

export interface StreamBatchOptions<R extends StreamQueueRecord> {
  /** Your reaction to one delivery; a throw fails its record (and its duplicates in the batch). */
  onDelivery: (envelope: DeliveryEnvelope, record: R) => Promise<void>;
  /**
   * Your reaction to a reconcile fact (fold it into your copy: `copy.apply([fact])`); a throw
   * fails its record. Absent: reconcile facts are skipped and reported (`onSkipped`).
   */
  onReconcile?: (fact: ReconcileFact, record: R) => Promise<void>;
  /** Your erasure of what you derived; a throw fails the notice's record. */
  onErasure?: (notice: ErasureNotice, record: R) => Promise<void>;
  /**
   * A message skipped, not failed: a kind or `schemaVersion` this package does not know (a later
   * contract's: upgrade to read it), or a reconcile fact with no `onReconcile`.
   * @default a warning on the console (`console.warn`), one line per message
   */
  onSkipped?: (message: SkippedStreamMessage, record: R) => void | Promise<void>;
  /** Delivery ids handled in earlier batches. @default memoryDeliveryIdStore() */
  handled?: DeliveryIdStore;
  /** The erasures acted on, per app (`ErasureStateStore`). @default memoryErasureState() */
  erasures?: ErasureStateStore;
}

/** The default `onSkipped`: one line on the console. */
function warnSkipped(message: SkippedStreamMessage): void {
  console.warn(`stream message skipped: ${JSON.stringify(message)}`);
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
  const erasures = options.erasures ?? memoryErasureState();
  const skip = options.onSkipped ?? warnSkipped;

  return async (event) => {
    const failed = new Set<string>();
    const facts: { record: R; envelope: FactEnvelope }[] = [];
    const notices: { record: R; envelope: ErasureNotice }[] = [];
    for (const record of event.Records) {
      try {
        const envelope = parseStreamMessage(record.body);
        if (envelope.kind === "erasure") notices.push({ record, envelope });
        else if (envelope.kind === "delivery" || options.onReconcile) facts.push({ record, envelope });
        else
          await skip(
            {
              kind: envelope.kind,
              schemaVersion: envelope.schemaVersion,
              id: envelope.id,
              reason: "a reconcile fact, and no onReconcile handles them",
            },
            record,
          );
      } catch (error) {
        if (error instanceof UnknownStreamMessageError)
          await skip(
            {
              kind: error.kind,
              schemaVersion: error.schemaVersion,
              ...(error.id === undefined ? {} : { id: error.id }),
              reason: error.message,
            },
            record,
          );
        else failed.add(record.messageId);
      }
    }
    // Each app's erasures, read once per batch (a durable store: one read per app).
    const apps = new Map<string, AppErasures | undefined>();
    const stateOf = async (appId: string) => {
      if (!apps.has(appId)) apps.set(appId, await erasures.get(appId));
      return apps.get(appId);
    };
    const actOn = async (notice: ErasureNotice) => {
      const next = actedOn(await stateOf(notice.appId), notice);
      apps.set(notice.appId, next);
      await erasures.set(notice.appId, next);
    };
    for (const { envelope } of notices) if (envelope.scope === "app") await actOn(envelope);
    /** Each key's outcome in this batch: a copy shares its first record's. */
    const outcomes = new Map<string, Promise<boolean>>();
    for (const { record, envelope } of facts) {
      const state = await stateOf(envelope.appId ?? "");
      if (erasedBefore(envelope, state)) continue;
      const key = handledKey(envelope, state);
      let outcome = outcomes.get(key);
      if (!outcome) {
        outcome = handleOnce(envelope, key, record);
        outcomes.set(key, outcome);
      }
      if (!(await outcome)) failed.add(record.messageId);
    }
    for (const { record, envelope } of notices) {
      try {
        await options.onErasure?.(envelope, record);
        if (envelope.scope === "user") await actOn(envelope);
      } catch {
        failed.add(record.messageId);
      }
    }
    return { batchItemFailures: [...failed].map((itemIdentifier) => ({ itemIdentifier })) };
  };

  async function handleOnce(envelope: FactEnvelope, key: string, record: R): Promise<boolean> {
    try {
      if (await handled.has(key)) return true;
      if (envelope.kind === "delivery") await options.onDelivery(envelope, record);
      else await options.onReconcile?.(envelope, record);
      await handled.add(key);
      return true;
    } catch {
      return false;
    }
  }
}
