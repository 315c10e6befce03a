import { type SessionEvent, sessionIdOf } from "@webhook-backend/stream/events/accessors";
import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import type { KnownEvent, ParsedEvent } from "@webhook-backend/stream/events/schemas";
import { evolveOnce, projectionInput, withoutSeen } from "@webhook-backend/stream/fold";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import { isOwnItemOfErased } from "@webhook-backend/stream/projections/own-items";
import { PROJECTIONS, type VersionedItem } from "@webhook-backend/stream/projections/registry";
import type { SessionState } from "@webhook-backend/stream/projections/sessions";
import type { ItemKey, Projection, ProjectionInput } from "@webhook-backend/stream/projections/types";
import { messageGroupOf, type RecordingJob, recordingJobAttributes } from "../contracts/queue-messages";
import { ItemLimitError } from "../platform/errors";
import type { ProjectionOutcome } from "../platform/outcomes";
import type { BlobStore } from "../ports/blob-store";
import type { ItemStore } from "../ports/item-store";
import type { MessageQueue } from "../ports/message-queue";
import { type ItemExpiryDays, withExpiry } from "./expiry";
import type { FactStream } from "./fact-stream";
import type { QueuedEvent } from "./queued-event";
import { quarantine } from "./raw-archive";
import { type ProjectionStores, tableBindings } from "./registry";

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

/** A known event of a batch, by its position in the batch. */
interface BatchInput {
  index: number;
  input: ProjectionInput;
  /** The pseudonyms a redaction in flight put in its body (`QueuedEvent.erasedAs`): none of their own items is written. */
  erasedAs?: readonly string[];
}

/**
 * Whether `key` is the own item of one of `erasedAs` in `projection`'s table (`isOwnItemOfErased`,
 * the stream package's rule, which its fold applies too): a delivery redacted in flight (#50)
 * writes none of its pseudonyms' own items: the erasure deleted the user's, and the tables end as
 * if it had been projected before the erasure ran (and as a replay, which skips redacted lines,
 * leaves them).
 */
function ownOfErased(
  projection: string,
  key: ItemKey,
  appId: string,
  erasedAs: readonly string[] = [],
): boolean {
  return erasedAs.length > 0 && isOwnItemOfErased(projection, key, appId, (uid) => erasedAs.includes(uid));
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
  for (const { index, input, erasedAs } of inputs) {
    if (!projection.handles(input.event)) continue;
    const typed = input as ProjectionInput<E>;
    track(index).handled = true;
    for (const key of projection.keys(typed)) {
      if (ownOfErased(projection.name, key, typed.event.appId, erasedAs)) continue;
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
  erasedAs: ReadonlyArray<readonly string[] | undefined> = [],
): Promise<Array<{ outcome: ProjectionOutcome } | { error: unknown }>> {
  const tracks = inputs.map((): EventTrack => ({ handled: false, changed: false }));
  const track = (index: number) => tracks[index] as EventTrack;
  const batch = inputs.map((input, index): BatchInput => ({ index, input, erasedAs: erasedAs[index] }));
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
  const known: BatchInput[] = [];
  await Promise.all(
    events.map(async (queued, index) => {
      const parsed = parsedEvents[index] ?? parseEventBody(queued.body);
      const refusal = refusalOf(parsed);
      if (parsed.kind === "known" && refusal === undefined) {
        known.push({
          index,
          input: projectionInput(parsed.event, queued.eventId, queued.receivedAt),
          ...(queued.erasedAs ? { erasedAs: queued.erasedAs } : {}),
        });
        return;
      }
      if (parsed.kind === "unknown") {
        results[index] = { outcome: "archived-only" };
        return;
      }
      try {
        await quarantine(queued, queued.refusal ?? refusal ?? "refused", deps.dataStore, deps.now);
        results[index] = { outcome: "quarantined" };
      } catch (error) {
        results[index] = { error };
      }
    }),
  );
  const projected = await projectInputs(
    known.map((k) => k.input),
    deps,
    known.map((k) => k.erasedAs),
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
