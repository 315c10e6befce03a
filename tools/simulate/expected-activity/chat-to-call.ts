/**
 * The chat-to-call figure: the callers who wrote to someone 1:1 earlier in the day and then
 * called them, per day and per hour of the call.
 */
import { type Fact, str } from "./facts";

/**
 * Chat-to-call: the callers who sent a 1:1 message to someone earlier in the day (event time) and
 * then initiated a 1:1 call to them, per day and per hour of the call.
 */
export function chatToCallOf(facts: readonly Fact[]): { day: Set<string>; hours: Array<Set<string>> } {
  const firstChat = new Map<string, number>();
  for (const f of facts) {
    if (f.trigger !== "message_sent" || str(f.data, "message.receiverType") !== "user") continue;
    const sender = str(f.data, "message.sender");
    const receiver = str(f.data, "message.receiver");
    if (!sender || !receiver) continue;
    const key = `${sender}>${receiver}`;
    firstChat.set(key, Math.min(firstChat.get(key) ?? Number.POSITIVE_INFINITY, f.order.eventTimeMs));
  }
  const day = new Set<string>();
  const hours = Array.from({ length: 24 }, () => new Set<string>());
  for (const f of facts) {
    if (f.trigger !== "call_initiated" || str(f.data, "call.receiverType") !== "user") continue;
    const caller = str(f.data, "call.sender");
    const callee = str(f.data, "call.receiver");
    if (!caller || !callee) continue;
    if ((firstChat.get(`${caller}>${callee}`) ?? Number.POSITIVE_INFINITY) < f.order.eventTimeMs) {
      day.add(caller);
      hours[f.hour]?.add(caller);
    }
  }
  return { day, hours };
}
