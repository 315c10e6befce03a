/**
 * The latency figures of a day or an hour: first responses in 1:1 conversations and the
 * deliveries and reads of messages sent in the day, with their nearest-rank percentiles.
 */
import type { Figures } from "../../../shared/analytics/figures";
import { compareFacts } from "../../../shared/projections/version";
import { actorOf, type Fact, str } from "./facts";

/** The p-th percentile by nearest rank: the value at the first rank r (from 1, ascending) with 100 r ≥ p n; 0 for none. */
function nearestRank(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p * sorted.length) / 100) - 1] ?? 0;
}

type Latency = "response" | "delivery" | "read";

/**
 * The latencies of a day's facts, each with its hour: first responses (a 1:1 message after one of
 * the other party's, in the order of facts) and the deliveries and reads of messages sent in the
 * day by a recipient other than the sender (ms after the message).
 */
export function latenciesOf(facts: readonly Fact[]): Array<{ kind: Latency; ms: number; hour: number }> {
  const ordered = [...facts].sort((a, b) => compareFacts(a.order, b.order));
  const out: Array<{ kind: Latency; ms: number; hour: number }> = [];
  const sent = new Map<string, { at: number; sender: string | undefined }>();
  const last = new Map<string, { sender: string; at: number }>();
  for (const f of ordered) {
    if (f.trigger !== "message_sent") continue;
    const id = str(f.data, "message.id");
    const sender = str(f.data, "message.sender");
    if (id !== undefined) {
      const known = sent.get(id);
      if (!known || f.order.eventTimeMs > known.at) sent.set(id, { at: f.order.eventTimeMs, sender });
    }
    const receiver = str(f.data, "message.receiver");
    if (str(f.data, "message.receiverType") !== "user" || !sender || !receiver) continue;
    const pair = [sender, receiver].sort().join("|");
    const previous = last.get(pair);
    if (previous && previous.sender !== sender)
      out.push({ kind: "response", ms: f.order.eventTimeMs - previous.at, hour: f.hour });
    last.set(pair, { sender, at: f.order.eventTimeMs });
  }
  for (const f of ordered) {
    if (f.trigger !== "message_delivery_receipt" && f.trigger !== "message_read_receipt") continue;
    const id = str(f.data, "body.messageId") ?? str(f.data, "messageId");
    const message = id === undefined ? undefined : sent.get(id);
    const reader = actorOf(f.trigger, f.data);
    if (!message || reader === undefined || message.sender === undefined || reader === message.sender)
      continue;
    const kind = f.trigger === "message_delivery_receipt" ? "delivery" : "read";
    out.push({ kind, ms: f.order.eventTimeMs - message.at, hour: f.hour });
  }
  return out;
}

/** The latency figures of a set of latencies (a day's, or an hour's). */
export function latencyFigures(values: ReadonlyArray<{ kind: Latency; ms: number }>): Partial<Figures> {
  const of = (kind: Latency) => values.filter((v) => v.kind === kind).map((v) => v.ms);
  const [response, delivery, read] = [of("response"), of("delivery"), of("read")];
  return {
    first_responses: response.length,
    first_response_p50_ms: nearestRank(response, 50),
    first_response_p90_ms: nearestRank(response, 90),
    delivery_latencies: delivery.length,
    delivery_latency_p50_ms: nearestRank(delivery, 50),
    delivery_latency_p90_ms: nearestRank(delivery, 90),
    delivery_latency_p99_ms: nearestRank(delivery, 99),
    read_latencies: read.length,
    read_latency_p50_ms: nearestRank(read, 50),
    read_latency_p90_ms: nearestRank(read, 90),
    read_latency_p99_ms: nearestRank(read, 99),
  };
}
