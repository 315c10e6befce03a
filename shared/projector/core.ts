import { messageGroupOf, type RecordingJob, recordingJobAttributes } from "../contracts/queue-messages";
import { type SessionEvent, sessionIdOf } from "../events/accessors";
import { eventTime } from "../events/event-time";
import { parseEventBody, refusalOf } from "../events/parse-body";
import type { KnownEvent, ParsedEvent } from "../events/schemas";
import { PLATFORM_RETRY_HORIZON_MS } from "../platform/constants";
import { ItemLimitError } from "../platform/errors";
import type { ProjectionOutcome } from "../platform/outcomes";
import { PROJECTION_TABLE_NAMES } from "../platform/tables";
import type { BlobStore } from "../ports/blob-store";
import type { ItemStore } from "../ports/item-store";
import type { MessageQueue } from "../ports/message-queue";
import { canonicalJson } from "../projections/canonical-json";
import type { SessionState } from "../projections/sessions";
import type {
  Fallback,
  Fallbacks,
  ItemKey,
  Projection,
  ProjectionInput,
  SeenEvents,
} from "../projections/types";
import {
  isNewer,
  lifecycleRank,
  type Version,
  versionOf,
  versionReceipt,
  versionTime,
} from "../projections/version";
import type { FactStream } from "./fact-stream";
import type { QueuedEvent } from "./queued-event";
import { quarantine } from "./raw-archive";
import { PROJECTIONS, type ProjectionStores, tableBindings, type VersionedItem } from "./registry";

export type { ProjectionStores, VersionedItem } from "./registry";

import { type ItemExpiryDays, withExpiry } from "./expiry";

export interface ProjectorDependencies {
  stores: ProjectionStores;
  /** Raw archive, quarantine, and where oversize bodies are read from. */
  dataStore: BlobStore;
  recordingJobs: MessageQueue;
  now: () => number;
  /** How long a closed item of each table stays (DynamoDB TTL), days; absent: kept (`expiry.ts`). */
  itemExpiryDays?: ItemExpiryDays;
  /**
   * Where the SQS batch handler (`batch.ts`) publishes each accepted record once its tables are
   * written (#41); absent: no stream. The core never publishes: a replay re-projects silently.
   */
  stream?: FactStream;
}

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

/** How many recent event ids an item remembers at most (the platform retries twice within 40 s). */
const SEEN_EVENTS_KEPT = 8;
/**
 * How long (ms of receipt time) an item remembers an event: the platform's retries come 10 s and
 * 30 s after a failed delivery, so its retry horizon (five minutes) covers them with room; a quiet
 * item keeps few ids.
 */
const SEEN_EVENTS_WINDOW_MS = PLATFORM_RETRY_HORIZON_MS;

/** An item remembers an event by the first 64 bits of its id: enough to tell its last few events apart. */
function seenId(eventId: string): string {
  return eventId.slice(0, 16);
}

/** The first receipt time an item remembers for an event (items written before ids were shortened kept versions). */
export function seenAt(seen: SeenEvents | undefined, eventId: string): number | undefined {
  const value = seen?.[seenId(eventId)] ?? seen?.[eventId];
  return typeof value === "string" ? versionTime(value) : value;
}

/**
 * Adds an event to an item's memory: its short id and its first receipt time (the earliest of the
 * receipts seen, ~30 bytes), keeping the `SEEN_EVENTS_KEPT` most recent within
 * `SEEN_EVENTS_WINDOW_MS` of the newest. The memory is written with every write of the item, so it
 * is kept small (an item over 1 KB costs a write unit per KB). What it keeps depends only on the
 * set of events applied, not on their order.
 */
export function rememberEvent(seen: SeenEvents | undefined, eventId: string, receivedAt: number): SeenEvents {
  const first = Math.min(seenAt(seen, eventId) ?? receivedAt, receivedAt);
  const entries = Object.entries({ ...seen, [seenId(eventId)]: first }).map(
    ([id, at]) => [id, typeof at === "string" ? versionTime(at) : at] as const,
  );
  entries.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const newest = entries[0]?.[1] ?? first;
  return Object.fromEntries(
    entries.filter(([, at]) => at >= newest - SEEN_EVENTS_WINDOW_MS).slice(0, SEEN_EVENTS_KEPT),
  );
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

/** Whether a part's version is this fact's (plain, or behind a `<rank>.` prefix). */
function isFact(partVersion: Version | undefined, version: Version): boolean {
  return partVersion === version || partVersion?.endsWith(`.${version}`) === true;
}

/** The fields of a part as they are on an item. */
function fieldsOf(state: object, fields: readonly string[]): Record<string, unknown> {
  const values = state as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => values[f] !== undefined).map((f) => [f, values[f]]));
}

/**
 * The item with the parts that `version` wrote released: a part with a runner-up falls back to it
 * (its fields and version), any other is left unversioned, to be re-taken by the next evolve of
 * the same fact.
 */
function releaseParts<S extends VersionedItem>(
  state: S,
  version: Version,
  parts: Readonly<Record<string, readonly string[]>> | undefined,
): S {
  const next: Record<string, unknown> = { ...state };
  const versions: Partial<Record<string, Version>> = {};
  const fallback: Fallbacks = { ...state.fallback };
  for (const [part, v] of Object.entries(state.versions)) {
    const behind = fallback[part];
    const fields = parts?.[part];
    if (!isFact(v, version)) versions[part] = v;
    else if (behind && fields && !isFact(behind.v, version)) {
      for (const field of fields) next[field] = behind.f[field];
      versions[part] = behind.v;
      delete fallback[part];
    }
  }
  for (const [part, behind] of Object.entries(fallback))
    if (behind && isFact(behind.v, version)) delete fallback[part];
  return { ...next, versions, fallback: Object.keys(fallback).length ? fallback : undefined } as S;
}

/**
 * Each declared part's runner-up after `input` (`Projection.parts`): the newest fact about the
 * part other than the one holding it, among the one held before (if displaced), the one the item
 * kept, and `input` itself (what it would have written had it been alone on the part), as long as
 * it was received within `PLATFORM_RETRY_HORIZON_MS` of the item's newest receipt: only then can
 * the holder be a platform retry whose original is still to come. Kept on the item so that a part
 * released by that original falls back to it (`releaseParts`) rather than to the original.
 */
function withFallbacks<S extends VersionedItem, E extends KnownEvent>(
  projection: Projection<S, E>,
  base: S | null,
  next: S,
  input: ProjectionInput<E>,
  key: ItemKey,
  newestReceipt: number,
): S {
  const fallback: Fallbacks = {};
  for (const [part, fields] of Object.entries(projection.parts ?? {})) {
    const holder = next.versions[part];
    const candidates: Fallback[] = [];
    const kept = next.fallback?.[part];
    if (kept) candidates.push(kept);
    const displaced = base?.versions[part];
    if (base && displaced !== undefined && displaced !== holder)
      candidates.push({ v: displaced, f: fieldsOf(base, fields) });
    if (base && holder !== undefined && !isFact(holder, input.version)) {
      const { [part]: _held, ...others } = base.versions;
      const alone = projection.evolve({ ...base, versions: others }, input, key);
      const v = alone.versions[part];
      if (v !== undefined && isFact(v, input.version)) candidates.push({ v, f: fieldsOf(alone, fields) });
    }
    let best: Fallback | undefined;
    for (const c of candidates)
      if (
        c.v !== holder &&
        versionReceipt(c.v) >= newestReceipt - PLATFORM_RETRY_HORIZON_MS &&
        (best === undefined || isNewer(best.v, c.v))
      )
        best = c;
    if (best) fallback[part] = best;
  }
  return { ...next, fallback: Object.keys(fallback).length ? fallback : undefined };
}

/**
 * Wraps a projection's evolve for one event, at its first receipt:
 * - an event id the item remembers from an earlier delivery is applied at that delivery's receipt
 *   (and, for an event without a payload time, at that time), so a platform retry (same bytes,
 *   later receipt) ranks where its first delivery did and never overrides a fact received between;
 * - a delivery earlier than the one the item remembers (the retry was projected first, while the
 *   original waited in the queue) releases the parts the later one wrote: each falls back to its
 *   runner-up (a fact received between them, which the retry displaced or beat), then the original
 *   is applied at this first receipt.
 */
export function evolveOnce<S extends VersionedItem, E extends KnownEvent>(
  projection: Projection<S, E>,
  input: ProjectionInput<E>,
  key: ItemKey,
): (state: S | null) => S {
  return (state) => {
    const prior = seenAt(state?.seen, input.eventId);
    const effective = atFirstReceipt(input, prior);
    const base =
      state && prior !== undefined && prior > input.receivedAt
        ? releaseParts(state, projectionInput(input.event, input.eventId, prior).version, projection.parts)
        : state;
    const evolved = projection.evolve(base, effective, key);
    const seen = rememberEvent(state?.seen, input.eventId, effective.receivedAt);
    const next = projection.parts
      ? withFallbacks(projection, base, evolved, effective, key, Math.max(...Object.values(seen).map(Number)))
      : evolved;
    return { ...next, seen };
  };
}

/** The state, as comparable text, without the memory of seen event ids (which a stale event also updates). */
export function withoutSeen(state: object): string {
  // A fact kept as a runner-up changes nothing a reader sees either.
  const { seen: _seen, fallback: _fallback, ...rest } = state as { seen?: SeenEvents; fallback?: Fallbacks };
  return canonicalJson(rest);
}

/** A known event of a batch, by its position in the batch. */
interface BatchInput {
  index: number;
  input: ProjectionInput;
}

/** What the fold learnt of each event: whether a table handles it, whether it changed an item, whether an item of it failed. */
interface EventTrack {
  handled: boolean;
  changed: boolean;
  error?: unknown;
}

/**
 * Folds every input a projection handles into its items: per item, one read (batched), all of its
 * events evolved in memory, one conditional write if the state changed. The inputs of an item are
 * applied in receipt order, so that of two copies of one event the first counts as projected and
 * the second as stale. Returns the items' final states (the sessions feed the recording jobs).
 */
async function foldProjection<S extends VersionedItem, E extends KnownEvent>(
  projection: Projection<S, E>,
  store: ItemStore<S>,
  inputs: readonly BatchInput[],
  track: (index: number) => EventTrack,
  expire: (state: S) => S = (state) => state,
): Promise<Map<string, S>> {
  const items = new Map<
    string,
    { key: ItemKey; inputs: Array<{ index: number; input: ProjectionInput<E> }> }
  >();
  for (const { index, input } of inputs) {
    if (!projection.handles(input.event)) continue;
    const typed = input as ProjectionInput<E>;
    track(index).handled = true;
    for (const key of projection.keys(typed)) {
      const id = `${key.pk}|${key.sk ?? ""}`;
      const item = items.get(id) ?? { key, inputs: [] };
      item.inputs.push({ index, input: typed });
      items.set(id, item);
    }
  }
  const list = [...items.entries()];
  const changedBy = new Map<string, Set<number>>();
  const outcomes = await store.applyMany(
    list.map(([id, item]) => {
      item.inputs.sort(
        (a, b) => a.input.receivedAt - b.input.receivedAt || (a.input.eventId < b.input.eventId ? -1 : 1),
      );
      return {
        key: item.key,
        // Re-run from a fresh read on a conflict: the record of who changed what is made anew.
        update: (state: S | null) => {
          const changed = new Set<number>();
          let current = state;
          // Each state is serialised once: the text of one step's result is the next step's "before".
          let currentText = current === null ? undefined : withoutSeen(current);
          for (const { index, input } of item.inputs) {
            const next = evolveOnce(projection, input, item.key)(current);
            const nextText = withoutSeen(next);
            if (currentText !== nextText) changed.add(index);
            current = next;
            currentText = nextText;
          }
          changedBy.set(id, changed);
          return expire(current as S);
        },
      };
    }),
  );
  const after = new Map<string, S>();
  outcomes.forEach((outcome, i) => {
    const [id, item] = list[i] as (typeof list)[number];
    for (const { index } of item.inputs) {
      const t = track(index);
      if (!outcome.ok) t.error ??= outcome.error;
      else if (changedBy.get(id)?.has(index)) t.changed = true;
    }
    if (outcome.ok) after.set(id, outcome.after);
  });
  return after;
}

/**
 * Projects the known events of a batch into every table that handles them: each table folds its
 * items (`foldProjection`), every table in parallel; then sends the recording jobs. An event
 * fails only if an item it touches failed (or its recording job could not be sent).
 *
 * @returns per input, in order: "projected" if it changed an item, "stale" if every item it
 *   touches already held it or newer, "archived-only" if no table handles it; or the error
 */
export async function projectInputs(
  inputs: readonly ProjectionInput[],
  deps: ProjectorDependencies,
): Promise<Array<{ outcome: ProjectionOutcome } | { error: unknown }>> {
  const tracks = inputs.map((): EventTrack => ({ handled: false, changed: false }));
  const track = (index: number) => tracks[index] as EventTrack;
  const batch = inputs.map((input, index) => ({ index, input }));
  const folded = await Promise.all(
    tableBindings(deps.stores).map(({ table, projection, store }) =>
      foldProjection(projection, store, batch, track, (state) =>
        deps.itemExpiryDays ? withExpiry(table, state, deps.itemExpiryDays) : state,
      ),
    ),
  );
  const sessions = folded[PROJECTION_TABLE_NAMES.indexOf("sessions")] as Map<string, SessionState>;
  await Promise.all(
    batch.map(async ({ index, input }) => {
      const { event } = input;
      if (event.trigger !== "recording_generated" || track(index).error !== undefined) return;
      const [key] = PROJECTIONS.sessions.keys(input as ProjectionInput<SessionEvent>);
      try {
        await sendRecordingJob(event, key ? sessions.get(`${key.pk}|`) : undefined, input.eventId, deps);
      } catch (error) {
        track(index).error = error;
      }
    }),
  );
  return tracks.map((t) =>
    t.error !== undefined
      ? { error: t.error }
      : { outcome: !t.handled ? "archived-only" : t.changed ? "projected" : "stale" },
  );
}

/**
 * Projects one known event (replay, tests): a batch of one.
 *
 * @throws the failure of an item it touches (worth retrying)
 */
export async function projectKnownEvent(
  event: KnownEvent,
  queued: Pick<QueuedEvent, "eventId" | "receivedAt">,
  deps: ProjectorDependencies,
): Promise<ProjectionOutcome> {
  const [result] = await projectInputs([projectionInput(event, queued.eventId, queued.receivedAt)], deps);
  if (!result || "error" in result) throw result?.error ?? new Error("no result");
  return result.outcome;
}

/** `session` is the item as the projection just left it (no second read). */
async function sendRecordingJob(
  event: Extract<KnownEvent, { trigger: "recording_generated" }>,
  session: SessionState | undefined,
  eventId: string,
  deps: ProjectorDependencies,
): Promise<void> {
  const sessionId = sessionIdOf(event) ?? event.data.sessionId;
  // Already archived: a redelivered recording_generated costs nothing more.
  if (session?.recordings[event.data.startTime]?.status === "archived") return;
  const job: RecordingJob = {
    appId: event.appId,
    sessionId,
    startTime: event.data.startTime,
    recordingDate: event.data.recordingDate,
    recordingUrl: event.data.recording_url,
    eventId,
  };
  await deps.recordingJobs.send({
    body: JSON.stringify(job),
    attributes: recordingJobAttributes(job),
    groupId: messageGroupOf(job.appId),
  });
}

/**
 * Handles the decoded events of a batch: parse each, quarantine the invalid ones, count unknown
 * triggers as archived-only, and fold the known ones into the tables (`projectInputs`); an event
 * naming a key DynamoDB cannot hold (`ItemLimitError`) is quarantined with that reason (its other
 * tables' items are projected).
 *
 * @returns per event, in order, its outcome or the error that makes it worth retrying
 */
export async function projectBatch(
  events: readonly QueuedEvent[],
  deps: ProjectorDependencies,
  parsedEvents: readonly ParsedEvent[] = events.map((e) => parseEventBody(e.body)),
): Promise<Array<{ outcome: ProjectionOutcome } | { error: unknown }>> {
  const results: Array<{ outcome: ProjectionOutcome } | { error: unknown }> = [];
  const known: Array<{ index: number; input: ProjectionInput }> = [];
  await Promise.all(
    events.map(async (queued, index) => {
      const parsed = parsedEvents[index] ?? parseEventBody(queued.body);
      const refusal = refusalOf(parsed);
      if (parsed.kind === "known" && refusal === undefined) {
        known.push({ index, input: projectionInput(parsed.event, queued.eventId, queued.receivedAt) });
        return;
      }
      if (parsed.kind === "unknown") {
        results[index] = { outcome: "archived-only" };
        return;
      }
      try {
        await quarantine(queued, refusal ?? "refused", deps.dataStore, deps.now);
        results[index] = { outcome: "quarantined" };
      } catch (error) {
        results[index] = { error };
      }
    }),
  );
  const projected = await projectInputs(
    known.map((k) => k.input),
    deps,
  );
  await Promise.all(
    known.map(async ({ index }, i) => {
      const result = projected[i] as (typeof results)[number];
      results[index] = result;
      // A key DynamoDB cannot hold (a 1,100-character uid) will never be stored: quarantined with
      // why, so that it is not retried with its batch-mates until it dead-letters.
      if (!("error" in result) || !(result.error instanceof ItemLimitError)) return;
      try {
        await quarantine(events[index] as QueuedEvent, result.error.message, deps.dataStore, deps.now);
        results[index] = { outcome: "quarantined" };
      } catch (error) {
        results[index] = { error };
      }
    }),
  );
  return results;
}
