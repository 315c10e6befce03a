import { eventTime } from "@webhook-backend/stream/events/event-time";
import { parseEventBody } from "@webhook-backend/stream/events/parse-body";
import type { KnownEvent } from "@webhook-backend/stream/events/schemas";
import { RETRY_SPREAD_MS } from "@webhook-backend/stream/fold";

/*
 * The reference's facts (#57): what the documents say the tables are a function of, and how they
 * order them. Written from docs/design-and-limits.md and docs/tables.md, never from the fold: no K,
 * no W inside, no runner-ups; every fact of an item is kept and each rule reads the whole set.
 * Line numbers cite the documents as amended by #57.
 */

/** One delivery as the edge stamped it (the shape of `test/support/histories.ts`). */
export interface ReceivedCopy {
  body: string;
  receivedAt: number;
  eventId: string;
}

/** One fact: its body, its event id and the receipt it counts at. */
export interface Fact {
  event: KnownEvent;
  eventId: string;
  /** The receipt the fact counts at: its earliest (design-and-limits.md:63), or, beyond W, one of its copies'. */
  receipt: number;
  /** Event time, ms: the payload's, else the receipt (design-and-limits.md:54, "their version is the edge's receipt time"). */
  time: number;
  rank: 0 | 1 | 2;
}

/**
 * The lifecycle rank (tables.md:36-37): a terminal step outranks anything at its time, an opening
 * step is outranked by anything; the triggers are the ones tables.md:36-37 and version.ts's doc name.
 */
const OPENING = ["group_created", "call_initiated", "call_started", "meeting_started"];
const TERMINAL = [
  "group_deleted",
  "call_busy",
  "call_cancelled",
  "call_rejected",
  "call_unanswered",
  "call_ended",
  "meeting_ended",
];
export function rankOf(trigger: string): 0 | 1 | 2 {
  return OPENING.includes(trigger) ? 0 : TERMINAL.includes(trigger) ? 2 : 1;
}

/**
 * Which fact is later (tables.md:30, "the tuple (event time, lifecycle rank, first receipt at the
 * edge, event id)"; :41, "two different facts with everything else equal: the greater event id").
 * Versions keep 12 characters of the id (tables.md:46): the ids are compared on those.
 */
export function compareFacts(a: Fact, b: Fact): number {
  const id = (f: Fact) => f.eventId.slice(0, 12);
  return (
    a.time - b.time ||
    a.rank - b.rank ||
    a.receipt - b.receipt ||
    (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0)
  );
}

/** The latest of some facts (`compareFacts`), undefined for none. */
export function latest(facts: readonly Fact[]): Fact | undefined {
  return facts.reduce<Fact | undefined>(
    (best, f) => (best === undefined || compareFacts(f, best) > 0 ? f : best),
    undefined,
  );
}

/** A fact of `event` counted at `receipt`: its event time per trigger (docs/how-it-works.md's table is `EVENT_TIME_FIELDS`). */
export function factAt(event: KnownEvent, eventId: string, receipt: number): Fact {
  return { event, eventId, receipt, time: eventTime(event, receipt).ms, rank: rankOf(event.trigger) };
}

/** A fact and every receipt of its copies, the earliest first. */
export interface FactCopies {
  event: KnownEvent;
  eventId: string;
  receipts: number[];
}

/**
 * The set of facts of some deliveries: one per event id (design-and-limits.md:62-63, "the set
 * {(fact's event id, body, earliest receipt among that fact's deliveries)}"), bodies the projector
 * refuses left out (quarantined: not facts of the tables).
 */
export function factsOf(deliveries: readonly ReceivedCopy[]): FactCopies[] {
  const byId = new Map<string, FactCopies>();
  for (const d of deliveries) {
    const known = byId.get(d.eventId);
    if (known) {
      known.receipts.push(d.receivedAt);
      continue;
    }
    const parsed = parseEventBody(d.body);
    if (parsed.kind !== "known") continue;
    byId.set(d.eventId, { event: parsed.event, eventId: d.eventId, receipts: [d.receivedAt] });
  }
  for (const f of byId.values()) f.receipts = [...new Set(f.receipts)].sort((a, b) => a - b);
  return [...byId.values()];
}

/**
 * The receipts each fact may count at. Within W of its earliest: only the earliest
 * (design-and-limits.md:63-69). A fact with a copy received more than W after its earliest may
 * count at any of its copies' receipts (design-and-limits.md:83-85, "as if it had been received
 * only at one of its copies' receipts"): the reference then allows each.
 */
export function allowedReceipts(fact: FactCopies): number[] {
  const [first = 0, ...rest] = fact.receipts;
  const last = rest.at(-1) ?? first;
  return last - first > RETRY_SPREAD_MS ? fact.receipts : [first];
}

/**
 * Every way of counting the facts (`allowedReceipts`), at most `cap` of them (the first facts'
 * choices varied first; a history drawn with more alternatives than that is checked on the first
 * `cap`, which the property says in its failure).
 */
export function countings(facts: readonly FactCopies[], cap = 64): Fact[][] {
  let out: Fact[][] = [[]];
  for (const f of facts) {
    const choices = allowedReceipts(f);
    const next: Fact[][] = [];
    for (const partial of out)
      for (const receipt of choices) {
        if (next.length >= cap) break;
        next.push([...partial, factAt(f.event, f.eventId, receipt)]);
      }
    out = next;
  }
  return out;
}
