/**
 * The order of facts. Each part of an item keeps the fact with the highest
 * **(event time, lifecycle rank, first receipt time at the edge, event id)**:
 * - the event time (ms) comes first: a later fact wins;
 * - at the same event time (the platform's clock ticks in whole seconds for groups and calls),
 *   the lifecycle decides: an opening step (created, initiated, started) ranks 0, a terminal step
 *   (deleted, ended, busy, rejected, …) 2, anything else 1 — so a group created and deleted in one
 *   second is deleted, whatever the order the deliveries arrive in;
 * - then the fact first received later wins, by its *first* receipt at the edge (a platform retry
 *   of the same bytes keeps the receipt of its first delivery: the projector remembers it per item);
 * - the event id (SHA-256 of the body) last, so two different facts never share a version.
 *
 * A version encodes that tuple as a fixed-width string, so versions compare as strings: one
 * comparison, defined here, for the projections, `query event`, replay, reconcile and the
 * analytics. The SQL equivalent is `ORDER BY event_time, rank, first_received_at, event_id`.
 */
export type Version = string;

/** 0 for an opening step, 1 for anything else, 2 for a terminal step. */
export type LifecycleRank = 0 | 1 | 2;

/** The facts that open a lifecycle: at the same instant, anything else about the item comes after them. */
export const OPENING_TRIGGERS: readonly string[] = [
  "group_created",
  "call_initiated",
  "call_started",
  "meeting_started",
];

/** The facts that close a lifecycle: at the same instant, they come after anything else about the item. */
export const TERMINAL_TRIGGERS: readonly string[] = [
  "group_deleted",
  "call_busy",
  "call_cancelled",
  "call_rejected",
  "call_unanswered",
  "call_ended",
  "meeting_ended",
];

/**
 * Where a trigger stands in its item's lifecycle.
 *
 * @example lifecycleRank("group_deleted") // 2
 */
export function lifecycleRank(trigger: string): LifecycleRank {
  if (OPENING_TRIGGERS.includes(trigger)) return 0;
  if (TERMINAL_TRIGGERS.includes(trigger)) return 2;
  return 1;
}

/** What orders one fact against another about the same item. */
export interface FactOrder {
  /** Event time, ms (payload field, or the first receipt when the payload has none). */
  eventTimeMs: number;
  rank: LifecycleRank;
  /** The edge's receipt time (ms) of the fact's first delivery. */
  firstReceivedAt: number;
  /** SHA-256 of the raw body (hex); its first 12 characters are kept. */
  eventId: string;
}

/** Width of a time in base 36: 9 digits reach the year 5138 in ms. */
const TIME_WIDTH = 9;
const ID_WIDTH = 12;

function encodeTime(ms: number): string {
  return Math.max(0, Math.trunc(ms)).toString(36).padStart(TIME_WIDTH, "0");
}

/**
 * The version of a fact: time, rank, first receipt and id, fixed width (31 characters, as small
 * as the versions it replaces), so that versions compare as strings in the order above.
 *
 * @example versionOf({ eventTimeMs: 1763000000000, rank: 2, firstReceivedAt: 1763000000300, eventId: "ab12…" })
 *   // "0mhwsoi68" + "2" + "0mhwsoiek" + "ab12cd34ef56"
 */
export function versionOf(order: FactOrder): Version {
  const id = factIdOf(order.eventId);
  return `${encodeTime(order.eventTimeMs)}${order.rank}${encodeTime(order.firstReceivedAt)}${id}`;
}

/**
 * What a version keeps of an event id: its first 12 characters (48 bits of the body's hash, enough
 * to tell one item's facts apart).
 */
export function factIdOf(eventId: string): string {
  return eventId.slice(0, ID_WIDTH).padEnd(ID_WIDTH, "0");
}

/** A version written before the rank and the first receipt were part of it, with an optional `<d>.` prefix. */
const LEGACY = /^(\d\.)?(\d{15})\.([0-9a-f]*)$/;

/**
 * Versions written before the rank and the first receipt were part of them
 * (`<15-digit ms>.<hash>`) compare by their time, as a middle-rank fact first received then.
 */
function comparable(version: Version): Version {
  const legacy = LEGACY.exec(version);
  if (!legacy) return version;
  const ms = Number(legacy[2]);
  return `${legacy[1] ?? ""}${versionOf({ eventTimeMs: ms, rank: 1, firstReceivedAt: ms, eventId: legacy[3] ?? "" })}`;
}

/** Whether `candidate` is strictly newer than `current` (absent counts as oldest). */
export function isNewer(current: Version | undefined, candidate: Version): boolean {
  return current === undefined || comparable(candidate) > comparable(current);
}

/**
 * Orders two facts by the rule above (negative when `a` comes first).
 *
 * @example compareFacts(created, deleted) // < 0 at the same second
 */
export function compareFacts(a: FactOrder, b: FactOrder): number {
  const [x, y] = [versionOf(a), versionOf(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The first receipt (ms) a version was made from, behind an optional `<rank>.` prefix.
 *
 * @example versionReceipt(versionOf({ eventTimeMs: 1, rank: 1, firstReceivedAt: 1763000000300, eventId: "ab" })) // 1763000000300
 */
export function versionReceipt(version: Version): number {
  const plain = comparable(version).replace(/^\d\./, "");
  return parseInt(plain.slice(TIME_WIDTH + 1, 2 * TIME_WIDTH + 1), 36);
}

/** The event time (ms) a version was made from. */
export function versionTime(version: Version): number {
  return parseInt(comparable(version).slice(0, TIME_WIDTH), 36);
}

/** The smaller of two optional numbers. */
export function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** The larger of two optional numbers. */
export function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}

/** A version without its optional `<rank>.` prefix, and the prefix. */
function splitPrefix(version: Version): [prefix: string, plain: Version] {
  const c = comparable(version);
  const prefixed = /^\d\./.exec(c);
  return prefixed ? [prefixed[0], c.slice(2)] : ["", c];
}

/**
 * The fact a version names: the first 12 characters of its event id (what a version keeps).
 *
 * @example versionFactId(versionOf({ eventTimeMs: 1, rank: 1, firstReceivedAt: 2, eventId: "ab12cd34ef56ff" })) // "ab12cd34ef56"
 */
export function versionFactId(version: Version): string {
  return splitPrefix(version)[1].slice(-ID_WIDTH);
}

/** Whether a version was made from a receipt (an event without a payload time): its time is its receipt. */
function receiptTimed(plain: Version): boolean {
  return plain.slice(0, TIME_WIDTH) === plain.slice(TIME_WIDTH + 1, 2 * TIME_WIDTH + 1);
}

/**
 * The lowest version a copy of the same fact could have had, had it been received up to
 * `earlierMs` before the delivery this version was made from: as a prefix, so that every version
 * `>=` it (by string comparison of `comparable` versions) is one that fact could still lose to.
 * A receipt-timed fact (time = receipt) moves in time; a payload-timed one only in its receipt.
 *
 * @example lowestCopy(joinedAtR, 60_000) >= joinedAtR minus one minute's time prefix
 */
export function lowestCopy(version: Version, earlierMs: number): string {
  const [prefix, plain] = splitPrefix(version);
  if (receiptTimed(plain)) return `${prefix}${encodeTime(versionTime(plain) - earlierMs)}`;
  return `${prefix}${plain.slice(0, TIME_WIDTH + 1)}${encodeTime(versionReceipt(plain) - earlierMs)}`;
}

/**
 * Above the highest version a copy of the same fact could have, had it been received up to
 * `laterMs` after the delivery this version was made from (`lowestCopy`'s mirror): a fact whose
 * `highestCopy` is below what a part's holder can be lowered to can never take the part, in any
 * copy.
 */
export function highestCopy(version: Version, laterMs: number): string {
  const [prefix, plain] = splitPrefix(version);
  if (receiptTimed(plain)) return `${prefix}${encodeTime(versionTime(plain) + laterMs)}~`;
  return `${prefix}${plain.slice(0, TIME_WIDTH + 1)}${encodeTime(versionReceipt(plain) + laterMs)}~`;
}

/** A version as it compares (`isNewer`): the legacy forms rewritten. */
export function comparableVersion(version: Version): Version {
  return comparable(version);
}
