import { createHash } from "node:crypto";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import type { GeneratedEvent } from "../../tools/simulate/generator";

/** A generated event as the projector gets it from the queue, received at `receivedAt` (its id: the body's hash, as the ingest makes it). */
export function queuedAt(
  e: Pick<GeneratedEvent, "body" | "trigger" | "appId">,
  receivedAt: number,
): QueuedEvent {
  const eventId = createHash("sha256").update(e.body).digest("hex");
  return {
    messageId: `m-${eventId.slice(0, 8)}`,
    eventId,
    receivedAt,
    trigger: e.trigger,
    appId: e.appId,
    body: e.body,
  };
}
