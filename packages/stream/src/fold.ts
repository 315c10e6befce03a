import { eventTime } from "./events/event-time.ts";
import type { KnownEvent } from "./events/schemas.ts";
import { compactFactId, keptFacts, knownAfter, recalls } from "./known-facts.ts";
import { canonicalJson } from "./projections/canonical-json.ts";
import type { VersionedItem } from "./projections/registry.ts";
import type { Fallbacks, ItemKey, Projection, ProjectionInput, RunnerUp } from "./projections/types.ts";
import {
  comparableVersion,
  factIdOf,
  highestCopy,
  lifecycleRank,
  lowestCopy,
  type Version,
  versionFactId,
  versionOf,
} from "./projections/version.ts";

/**
 * W: how much later than its fact's earliest receipt a copy may be received for the fold to stay
 * exact. The platform retries at most twice, 10 s and 30 s after a failed delivery, each waiting
 * up to 2 s for an answer (~45 s); a minute leaves room for the edge's clock.
 */
export const RETRY_SPREAD_MS = 60_000;

/**
 * K: the most runner-ups a part of a projected item keeps, candidates and shadows, the best
 * first. Beyond it the lowest are forgotten, their ids kept (`known`, `KNOWN_SPAN_MS`) so that a
 * retry of one is still recognised: only more than K facts of one part within twice W, each
 * lowered by a late original (a retry processed ahead of it), may leave the part on an older
 * fact than the right one.
 */
export const RUNNER_UPS_KEPT = 6;

/**
 * How far below an item's newest receipt the ids of the facts it keeps in no part are remembered
 * (`known`, #57): twice W, the reach of the runner-ups' shadows. Bounded by time, not by count,
 * so that a busy group (hundreds of joins within W) still recognises a platform retry.
 */
export const KNOWN_SPAN_MS = 2 * RETRY_SPREAD_MS;

/*
 * The pure fold of one item (#49): one state from one set of facts. What an item becomes is a
 * function of the set {(fact's event id, body, earliest receipt among its deliveries)}, whatever
 * the order, batching and repetition of processing, as long as every copy of a fact is received
 * within `RETRY_SPREAD_MS` of its earliest (the platform's retries: ~10 s and ~30 s later). No
 * I/O, no clock, no AWS client: the stream's consumers fold with it too.
 *
 * How: a fact's version (time, rank, receipt, id) can only be too high, and by at most the spread,
 * when a later copy of it was folded first. So each part keeps, besides its holder, the facts that
 * could still take it back once the holder is lowered (`RunnerUp`): every fact about the part whose
 * version is within the spread below the holder's (its fields kept), and, within twice the spread,
 * the versions of the others (so that a late copy of one is recognised, never applied at a later
 * receipt). A copy of a fact an item holds is applied at the earliest receipt the item knows for
 * it; an earlier copy than that releases the fact from every part (each falls back to its best
 * runner-up) and applies it again, lower.
 */

/**
 * What the projections are given for an event received (first) at `receivedAt`: its time
 * (payload, or that receipt) and its version (`versionOf`: time, lifecycle rank, receipt, id).
 *
 * @example projectionInput(groupDeleted, eventId, receivedAt).version // "0mhwsoi682…"
 */
export function projectionInput(event: KnownEvent, eventId: string, receivedAt: number): ProjectionInput {
  const time = eventTime(event, receivedAt);
  return {
    event,
    eventId,
    receivedAt,
    eventTimeMs: time.ms,
    timeSource: time.source,
    version: versionOf({
      eventTimeMs: time.ms,
      rank: lifecycleRank(event.trigger),
      firstReceivedAt: receivedAt,
      eventId,
    }),
  };
}

/**
 * The input as of the event's first receipt: at `firstReceivedAt` (what an item remembers) when
 * that is earlier than this delivery's, else as it is.
 */
export function atFirstReceipt<E extends KnownEvent>(
  input: ProjectionInput<E>,
  firstReceivedAt: number | undefined,
): ProjectionInput<E> {
  return firstReceivedAt !== undefined && firstReceivedAt < input.receivedAt
    ? (projectionInput(input.event, input.eventId, firstReceivedAt) as ProjectionInput<E>)
    : input;
}

/** A runner-up as the fold works with it: every field of its part (a shadow has none). */
interface Entry {
  v: Version;
  f?: Record<string, unknown>;
}

const byVersionDesc = (a: Entry, b: Entry) => {
  const [x, y] = [comparableVersion(a.v), comparableVersion(b.v)];
  return x < y ? 1 : x > y ? -1 : 0;
};

/** The fields of a part as they are on an item (an absent one, undefined). */
function fieldsOf(state: object, fields: readonly string[]): Record<string, unknown> {
  const values = state as Record<string, unknown>;
  return Object.fromEntries(fields.map((f) => [f, values[f] ?? undefined]));
}

/**
 * The earliest receipt an item knows for a fact: the versions its parts and runner-ups keep that
 * name the fact (and, on an item written before #49, its memory of event ids).
 *
 * @example knownReceipt(item, eventId) // 1763000000000, or undefined for a fact it does not know
 */
export function knownReceipt(state: VersionedItem | null, eventId: string): number | undefined {
  return keptFacts(state).get(factIdOf(eventId));
}

/** A field part's version where the item leaves it implicit (its owner's), made explicit. */
function expandFieldParts<S extends VersionedItem>(projection: Projection<S, never>, state: S): S {
  if (!projection.fieldParts) return state;
  const versions = { ...state.versions };
  const values = state as Record<string, unknown>;
  for (const [part, owner] of Object.entries(projection.fieldParts))
    if (versions[part] === undefined && projection.parts?.[part]?.some((f) => values[f] !== undefined))
      versions[part] = versions[owner];
  return { ...state, versions };
}

/** A field part's version left implicit where it is its owner's (the compact form stored). */
function compactFieldParts<S extends VersionedItem>(projection: Projection<S, never>, state: S): S {
  if (!projection.fieldParts) return state;
  const versions = { ...state.versions };
  for (const [part, owner] of Object.entries(projection.fieldParts))
    if (versions[part] !== undefined && versions[part] === versions[owner]) delete versions[part];
  return { ...state, versions };
}

/** An item's runner-ups, per part, best first, each with every field of its part. */
function decodeRunnerUps(
  state: VersionedItem,
  parts: Readonly<Record<string, readonly string[]>>,
): Map<string, Entry[]> {
  const lists = new Map<string, Entry[]>();
  for (const [part, stored] of Object.entries(state.fallback ?? {})) {
    const fields = parts[part] ?? [];
    if (!stored) continue;
    // Written before #49: one runner-up with every field it wrote.
    if (!Array.isArray(stored)) {
      lists.set(part, [{ v: stored.v, f: { ...fieldsOf({}, fields), ...stored.f } }]);
      continue;
    }
    const holder = fieldsOf(state, fields);
    lists.set(
      part,
      stored.map((r): Entry => {
        if (typeof r === "string") return { v: r };
        const f = { ...holder };
        for (const [name, value] of Object.entries(r.f ?? {})) f[name] = value ?? undefined;
        return { v: r.v, f };
      }),
    );
  }
  return lists;
}

/** The runner-ups as stored: a candidate's fields only where they differ from the holder's. */
function encodeRunnerUps(
  state: VersionedItem,
  lists: ReadonlyMap<string, Entry[]>,
  parts: Readonly<Record<string, readonly string[]>>,
): Fallbacks | undefined {
  const out: Fallbacks = {};
  for (const [part, entries] of lists) {
    if (entries.length === 0) continue;
    const holder = fieldsOf(state, parts[part] ?? []);
    out[part] = entries.map((e): RunnerUp => {
      if (!e.f) return e.v;
      const diff: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(e.f))
        if (canonicalJson(value ?? null) !== canonicalJson(holder[name] ?? null)) diff[name] = value ?? null;
      return Object.keys(diff).length ? { v: e.v, f: diff } : { v: e.v };
    });
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * The item with fact `id` taken out of it: each part it holds falls back to its best candidate
 * (its fields and version), or, with none, is left unversioned, to be re-taken by the fact's next
 * evolve; the fact leaves every list of runner-ups (`lists`, changed in place).
 */
function releaseFact<S extends VersionedItem>(
  state: S,
  id: string,
  lists: Map<string, Entry[]>,
  parts: Readonly<Record<string, readonly string[]>> | undefined,
): S {
  for (const [part, entries] of lists)
    lists.set(
      part,
      entries.filter((e) => versionFactId(e.v) !== id),
    );
  const next: Record<string, unknown> = { ...state };
  const versions: Partial<Record<string, Version>> = { ...state.versions };
  for (const [part, v] of Object.entries(state.versions)) {
    if (v === undefined || versionFactId(v) !== id) continue;
    const entries = lists.get(part) ?? [];
    const best = entries.find((e) => e.f !== undefined);
    const fields = parts?.[part];
    if (best?.f && fields) {
      for (const field of fields) next[field] = best.f[field];
      versions[part] = best.v;
      lists.set(
        part,
        entries.filter((e) => e !== best),
      );
    } else delete versions[part];
  }
  return { ...next, versions } as S;
}

/**
 * Each part's runner-ups after `input` was folded (`base` → `next`): the ones it kept, the holder
 * it displaced, and `input`'s own claim on the part (what it would have written had the part been
 * free), one per fact (its lowest version), best first; a candidate while within `RETRY_SPREAD_MS`
 * of what the holder could be lowered to, a shadow within twice that, at most `RUNNER_UPS_KEPT`.
 */
function runnerUpsAfter<S extends VersionedItem, E extends KnownEvent>(
  projection: Projection<S, E>,
  base: S | null,
  next: S,
  input: ProjectionInput<E>,
  key: ItemKey,
  lists: ReadonlyMap<string, Entry[]>,
): Map<string, Entry[]> {
  const id = versionFactId(input.version);
  const out = new Map<string, Entry[]>();
  for (const [part, fields] of Object.entries(projection.parts ?? {})) {
    const holder = next.versions[part];
    const pool = [...(lists.get(part) ?? [])];
    const displaced = base?.versions[part];
    if (base && displaced !== undefined && displaced !== holder)
      pool.push({ v: displaced, f: fieldsOf(base, fields) });
    if (
      base &&
      holder !== undefined &&
      versionFactId(holder) !== id &&
      highestCopy(input.version, RETRY_SPREAD_MS) >= lowestCopy(holder, RETRY_SPREAD_MS).replace(/^\d\./, "")
    ) {
      const { [part]: _held, ...others } = base.versions;
      const alone = projection.evolve({ ...base, versions: others }, input, key);
      const v = alone.versions[part];
      if (v !== undefined && versionFactId(v) === id) pool.push({ v, f: fieldsOf(alone, fields) });
    }
    out.set(part, keptRunnerUps(pool, holder));
  }
  return out;
}

/** One entry per fact (its lowest version), the holder's fact left out, banded and capped. */
function keptRunnerUps(pool: readonly Entry[], holder: Version | undefined): Entry[] {
  const lowest = new Map<string, Entry>();
  for (const e of pool) {
    const id = versionFactId(e.v);
    const known = lowest.get(id);
    if (!known || comparableVersion(e.v) < comparableVersion(known.v))
      lowest.set(id, known?.f && !e.f ? { ...e, f: known.f } : e);
  }
  if (holder !== undefined) lowest.delete(versionFactId(holder));
  const sorted = [...lowest.values()].sort(byVersionDesc);
  if (holder === undefined) return sorted.slice(0, RUNNER_UPS_KEPT);
  // What the holder could be lowered to: a fact at or above it may take the part back (a
  // candidate); one whose later copies could reach it is remembered (a shadow), to be recognised.
  const floor = lowestCopy(holder, RETRY_SPREAD_MS);
  const kept: Entry[] = [];
  for (const e of sorted) {
    const v = comparableVersion(e.v);
    if (v >= floor) kept.push(e);
    else if (highestCopy(v, RETRY_SPREAD_MS) >= floor) kept.push({ v: e.v });
    if (kept.length === RUNNER_UPS_KEPT) break;
  }
  return kept;
}

/**
 * Wraps a projection's evolve for one delivery, so that the item depends on the set of facts, not
 * on the order of their copies:
 * - a copy of a fact the item knows (`knownReceipt`) is applied at the earliest receipt known, so
 *   a platform retry (same bytes, later receipt) ranks where its first delivery did;
 * - a copy earlier than the one the item knows (the retry was folded first, the original waited
 *   in a queue), by at most `RETRY_SPREAD_MS`, releases the fact (`releaseFact`): each part it
 *   held falls back to its runner-up; then the fact is applied at this earlier receipt. One
 *   earlier by more than that is applied at the copy the item knows;
 * - the runner-ups are kept up to date (`runnerUpsAfter`), and the field parts' versions stored
 *   only where they differ from their owner's.
 *
 * @example evolveOnce(membershipsProjection, joinInput, key)(state).joinedAt
 */
export function evolveOnce<S extends VersionedItem, E extends KnownEvent>(
  projection: Projection<S, E>,
  input: ProjectionInput<E>,
  key: ItemKey,
): (state: S | null) => S {
  const generic = projection as unknown as Projection<S, never>;
  return (stored) => {
    const state = stored && expandFieldParts(generic, stored);
    const prior = knownReceipt(state, input.eventId);
    // A fact the item folded and keeps in no part (a join below the runner-ups of a busy group):
    // any copy of it, earlier or later, would change nothing the item shows (#57).
    if (
      stored &&
      prior === undefined &&
      projection.recallsFacts &&
      recalls(stored.known, compactFactId(factIdOf(input.eventId)))
    )
      return stored;
    // An earlier copy lowers the fact, within the spread only: one more than W earlier than the
    // copy the item knows is applied at that copy (the fact counts at the later receipt).
    const lowers =
      prior !== undefined && prior > input.receivedAt && prior - input.receivedAt <= RETRY_SPREAD_MS;
    const effective =
      prior === undefined || lowers || prior === input.receivedAt
        ? input
        : (projectionInput(input.event, input.eventId, prior) as ProjectionInput<E>);
    const parts = projection.parts;
    const lists = state && parts ? decodeRunnerUps(state, parts) : new Map<string, Entry[]>();
    const base = state && lowers ? releaseFact(state, versionFactId(input.version), lists, parts) : state;
    const evolved = projection.evolve(base, effective, key);
    const { seen: _forgotten, fallback: _old, known: _known, ...next } = evolved;
    const fallback = parts
      ? encodeRunnerUps(evolved, runnerUpsAfter(projection, base, evolved, effective, key, lists), parts)
      : undefined;
    const kept = compactFieldParts(generic, (fallback ? { ...next, fallback } : next) as S);
    const known = projection.recallsFacts ? knownAfter(state, kept, effective, KNOWN_SPAN_MS) : undefined;
    const result = known ? { ...kept, known } : kept;
    // Nothing learnt (a replay, a repeat of a fact it knows, or a fact that changes nothing it
    // keeps): the item as stored, old shapes and memory included, so no write.
    if (
      stored &&
      withoutSeen(stored) === withoutSeen(result) &&
      canonicalJson(stored.known ?? null) === canonicalJson(result.known ?? null)
    ) {
      if (prior !== undefined && !lowers) return stored;
      if (sameRunnerUps(stored, result, parts)) return stored;
    }
    return result;
  };
}

/** Whether `next` keeps the runner-ups `stored` keeps (however `stored` stores them). */
function sameRunnerUps(
  stored: VersionedItem,
  next: VersionedItem,
  parts: Readonly<Record<string, readonly string[]>> | undefined,
): boolean {
  const before = parts ? encodeRunnerUps(stored, decodeRunnerUps(stored, parts), parts) : undefined;
  return canonicalJson(before ?? null) === canonicalJson(next.fallback ?? null);
}

/** The state, as comparable text, without the bookkeeping that no reader sees (runner-ups, known ids, legacy memory). */
export function withoutSeen(state: object): string {
  const {
    seen: _seen,
    fallback: _fallback,
    known: _known,
    ...rest
  } = state as { seen?: unknown; fallback?: unknown; known?: unknown };
  return canonicalJson(rest);
}
