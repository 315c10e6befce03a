import type { ParsedEvent } from "@webhook-backend/stream/events/schemas";
import { onFirstUse } from "../adapters/lazy-adapters";
import type { ProjectionOutcome } from "../platform/outcomes";
import type { QueuedEvent } from "./queued-event";

/**
 * The projector's way out to the stream of facts (#41): after a batch's tables are written, every
 * record it accepted (projected, archived-only or stale; never a quarantined or failed one) is
 * handed to it. The stream (`shared/stream/projector-stream.ts`) publishes them; the projector
 * only reports what it answers. Absent from the dependencies: no stream at all.
 */

/** A record the projector accepted, as the stream needs it. */
export interface AcceptedRecord {
  messageId: string;
  /** SQS's `ApproximateReceiveCount`: the last receive may not fail on a publish. */
  receiveCount: number;
  event: QueuedEvent;
  parsed: ParsedEvent;
  outcome: Exclude<ProjectionOutcome, "quarantined">;
}

/**
 * What became of a record on its way out: published, kept in the stream's own dead-letter queue
 * (`unpublished`, on its last receive), or an error that fails the record (SQS redelivers it; it
 * comes back `stale` and is published then).
 */
export type FactStreamResult = { stream: "published" | "unpublished" } | { error: unknown };

export interface FactStream {
  /**
   * Publishes the accepted records of a batch. Resolves with each record's result by message id;
   * a record left out was not published because nothing listens (the stream is off). Never
   * rejects: a failure is a record's result.
   */
  publishAccepted(records: readonly AcceptedRecord[]): Promise<Map<string, FactStreamResult>>;
}

/**
 * A `FactStream` that does nothing while `isOn()` says nothing listens, and builds the real one
 * (`load`: its code and SNS client behind a dynamic `import()`) at its first publish: a projector
 * with no subscriber and no listener never loads it. If it cannot be loaded, each record of the
 * batch fails with why (and the next batch tries again).
 *
 * @example deps.stream = switchedFactStream(isOn, async () => (await import("./stream")).projectorStream(options))
 */
export function switchedFactStream(
  isOn: () => Promise<boolean>,
  load: () => Promise<FactStream>,
): FactStream {
  const stream = onFirstUse(load);
  return {
    async publishAccepted(records) {
      if (records.length === 0 || !(await isOn())) return new Map();
      try {
        return await (await stream()).publishAccepted(records);
      } catch (error) {
        return new Map(records.map((r) => [r.messageId, { error }]));
      }
    },
  };
}
