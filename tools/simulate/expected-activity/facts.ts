/**
 * The oracle's facts: a history's events each counted once by natural key (`dedupeKey`) at the
 * event time of its first receipt, per app (`factsOf`), and what the figures read from a fact's
 * payload (`get`, `str`, `int`; who acts in it, `actorOf`), as the day query reads the body.
 */
import { createHash } from "node:crypto";
import { utcDay } from "../../../shared/contracts/bucket-layout";
import { dedupeKey } from "../../../shared/events/dedupe";
import { eventTime } from "../../../shared/events/event-time";
import { parseWebhookEvent } from "../../../shared/events/schemas";
import { type FactOrder, lifecycleRank } from "../../../shared/projections/version";
import type { GeneratedEvent } from "../generator";

export type Json = Record<string, unknown>;

export const get = (value: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Json)[k] : undefined), value);
export const str = (value: unknown, path: string): string | undefined => {
  const v = get(value, path);
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : undefined;
};
export const int = (value: unknown, path: string): number => Number(get(value, path) ?? 0);

export const CALL_MESSAGES = [
  "call_initiated",
  "call_busy",
  "call_rejected",
  "call_cancelled",
  "call_unanswered",
];

/** Who acts in an event, as the figures define it (membership and block events: nobody). */
export function actorOf(trigger: string, data: unknown): string | undefined {
  if (trigger === "message_sent" || trigger === "user_mentioned") return str(data, "message.sender");
  // Either layout of an edit or delete: the action message's `by`, else the message's own fields.
  if (trigger === "message_edited" || trigger === "message_deleted")
    return (
      str(data, "message.data.entities.by.entity.uid") ??
      str(data, trigger === "message_edited" ? "message.editedBy" : "message.deletedBy") ??
      str(data, "message.sender")
    );
  if (trigger.startsWith("message_reaction_")) return str(data, "reaction.uid");
  if (trigger === "message_delivery_receipt" || trigger === "message_read_receipt")
    return str(data, "body.user.uid") ?? str(data, "receiptSender");
  if (trigger === "user_connection_status_changed") return str(data, "user.uid");
  if (CALL_MESSAGES.includes(trigger)) return str(data, "call.sender");
  if (trigger === "group_created" || trigger === "group_owner_transferred") return str(data, "group.owner");
  if (trigger === "group_updated" || trigger === "group_deleted") return str(data, "group.updatedBy");
  return undefined;
}

export interface Fact {
  trigger: string;
  data: unknown;
  order: FactOrder;
  day: string;
  hour: number;
}

/** The facts of a history: each natural key once, at its first receipt. */
export function factsOf(
  events: readonly GeneratedEvent[],
  receivedAt: (e: GeneratedEvent) => number,
): Map<string, Fact[]> {
  const first = new Map<string, { event: GeneratedEvent; at: number; eventId: string }>();
  for (const event of events) {
    const eventId = createHash("sha256").update(event.body).digest("hex");
    const parsed = parseWebhookEvent(JSON.parse(event.body));
    if (parsed.kind !== "known") continue;
    const key = dedupeKey(parsed.event, eventId);
    const at = receivedAt(event);
    const known = first.get(key);
    if (!known || at < known.at || (at === known.at && eventId < known.eventId))
      first.set(key, { event, at, eventId });
  }
  const byApp = new Map<string, Fact[]>();
  for (const { event, at, eventId } of first.values()) {
    const parsed = parseWebhookEvent(JSON.parse(event.body));
    if (parsed.kind !== "known") continue;
    const ms = eventTime(parsed.event, at).ms;
    const day = utcDay(ms);
    const fact: Fact = {
      trigger: parsed.event.trigger,
      data: (JSON.parse(event.body) as Json).data,
      order: { eventTimeMs: ms, rank: lifecycleRank(parsed.event.trigger), firstReceivedAt: at, eventId },
      day,
      hour: Math.floor((ms - Date.parse(`${day}T00:00:00Z`)) / 3_600_000),
    };
    byApp.set(event.appId, [...(byApp.get(event.appId) ?? []), fact]);
  }
  return byApp;
}
