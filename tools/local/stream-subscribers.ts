/**
 * STAND-IN, to delete once shared/stream/subscribers.ts (the stream-infra part of #41) is on
 * main: the names fixed in advance (`streamSubscribersSchema`, `StreamSubscriber`,
 * `filterPolicyOf`), just enough for the local stack and `listen`. Import them from here only.
 */
import * as z from "zod/mini";
import { STREAM_KIND } from "../../shared/stream/envelope";

export const streamSubscribersSchema = z.array(
  z.object({
    name: z.string().check(z.regex(/^[A-Za-z0-9_-]{1,60}$/)),
    apps: z.optional(z.array(z.string().check(z.minLength(1)))),
    triggers: z.optional(z.array(z.string().check(z.minLength(1)))),
    rawDelivery: z.optional(z.boolean()),
  }),
);
export type StreamSubscriber = z.infer<typeof streamSubscribersSchema>[number];

/** A trigger filter value: exact, `family:*` (the family's `family_…` triggers) or `prefix*`. */
function triggerValue(trigger: string): string | { prefix: string } {
  if (trigger.endsWith(":*")) return { prefix: `${trigger.slice(0, -2)}_` };
  if (trigger.endsWith("*")) return { prefix: trigger.slice(0, -1) };
  return trigger;
}

/** The subscriber's filter policy (none: everything); an erasure notice passes it whatever it says. */
export function filterPolicyOf(
  subscriber: Omit<StreamSubscriber, "name">,
): Record<string, unknown> | undefined {
  const deliveries: Record<string, unknown> = {};
  if (subscriber.apps?.length) deliveries.appId = subscriber.apps;
  if (subscriber.triggers?.length) deliveries.trigger = subscriber.triggers.map(triggerValue);
  if (Object.keys(deliveries).length === 0) return undefined;
  return { $or: [{ kind: [STREAM_KIND.erasure] }, { kind: [STREAM_KIND.delivery], ...deliveries }] };
}
