import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { RawArchiveLine } from "../../shared/contracts/bucket-layout";
import type { SessionEvent } from "../../shared/events/accessors";
import { parseEventBody, refusalOf } from "../../shared/events/parse-body";
import type { KnownEvent } from "../../shared/events/schemas";
import type { RecordingState } from "../../shared/projections/sessions";
import type { ItemKey, Projection, ProjectionInput } from "../../shared/projections/types";
import {
  atFirstReceipt,
  evolveOnce,
  knownReceipt,
  type ProjectionStores,
  projectionInput,
  type VersionedItem,
  withoutSeen,
} from "../../shared/projector/core";
import { PROJECTIONS, tableBindings } from "../../shared/projector/registry";
import { oneEventId } from "../cli/event-id";
import { type Filter, findEvents, peekDeadLetters } from "./inspect";

/** What became of one event, as `npm run query -- event <id>` tells it. */
export interface EventTrace {
  eventId: string;
  trigger?: string;
  appId?: string;
  receivedAt?: number;
  outcome: "projected" | "stale" | "archived-only" | "quarantined" | "dead-lettered" | "pending" | "redacted";
  /** Where it is kept: the archive or quarantine object. */
  key?: string;
  error?: string;
  /** Each item it touches, and whether the item's state holds it, or a newer fact. */
  items?: Array<{
    table: string;
    key: ItemKey;
    state: "includes it" | "newer fact supersedes it" | "does not have it yet";
  }>;
  note?: string;
  /**
   * The erasure that redacted this event's line (`webhook forget`): its identifiers of the erased
   * user are a pseudonym, their free text removed.
   */
  erasure?: string;
  /** A `recording_generated`'s recording, as the session holds it: archived (key, size) or failed (why). */
  recording?: Pick<
    RecordingState,
    "status" | "key" | "size" | "attempts" | "failureReason" | "failureDetail"
  >;
}

/**
 * Whether an item's state carries this event: a part versioned by the event's version (at the
 * first receipt the item remembers for it). An event that writes no versioned part of the item (a
 * recording, a participant, a start: unions, minimums and maximums) is carried once applying it
 * again changes nothing, which the caller checked.
 */
function holds<S extends VersionedItem, E extends KnownEvent>(
  projection: Projection<S, E>,
  state: VersionedItem,
  input: ProjectionInput<E>,
  key: ItemKey,
): boolean {
  const versioned = Object.values(evolveOnce(projection, input, key)(null).versions).some((v) =>
    v?.endsWith(input.version),
  );
  if (!versioned) return true;
  const { version } = atFirstReceipt(input, knownReceipt(state, input.eventId));
  return Object.values(state.versions).some((v) => v?.endsWith(version));
}

async function itemStates<S extends VersionedItem, E extends KnownEvent>(
  projection: Projection<S, E>,
  store: { get(key: ItemKey): Promise<S | null> },
  input: ProjectionInput,
): Promise<NonNullable<EventTrace["items"]>> {
  if (!projection.handles(input.event)) return [];
  const typed = input as ProjectionInput<E>;
  return Promise.all(
    projection.keys(typed).map(async (key) => {
      const state = await store.get(key);
      // The pure projection decides: applying the event again changes nothing once the item holds it or newer.
      const applied = state === null ? null : evolveOnce(projection, typed, key)(state);
      const current = state !== null && applied !== null && withoutSeen(applied) === withoutSeen(state);
      return {
        table: projection.name,
        key,
        state:
          !current || state === null
            ? "does not have it yet"
            : holds(projection, state, typed, key)
              ? "includes it"
              : "newer fact supersedes it",
      } as const;
    }),
  );
}

/** The recording a `recording_generated` announced, as its session holds it (none for other events). */
async function recordingOf(
  event: KnownEvent,
  input: ProjectionInput,
  stores: ProjectionStores,
): Promise<EventTrace["recording"]> {
  if (event.trigger !== "recording_generated") return undefined;
  const [key] = PROJECTIONS.sessions.keys(input as ProjectionInput<SessionEvent>);
  const session = key ? await stores.sessions.get(key) : null;
  const r = session?.recordings[event.data.startTime];
  return r
    ? {
        status: r.status,
        key: r.key,
        size: r.size,
        attempts: r.attempts,
        failureReason: r.failureReason,
        failureDetail: r.failureDetail,
      }
    : undefined;
}

/**
 * Where an event is and what it did, from what the stack already has: the quarantine, the DLQ,
 * the raw archive, and the items it touches judged by the pure projections (nothing is stored per
 * event for this).
 */
export async function traceEvent(
  clients: { s3: S3Client; sqs: SQSClient },
  bucket: string,
  deadLetterUrl: string | undefined,
  stores: ProjectionStores,
  eventId: string,
  filter: Filter = {},
): Promise<EventTrace> {
  // `eventId` may be a prefix (event-id.ts): the events it fits in the bucket and the DLQ name one.
  const { found: candidates, searched } = await findEvents(clients.s3, bucket, eventId, filter);
  const letters = deadLetterUrl
    ? (await peekDeadLetters(clients.sqs, deadLetterUrl, 10_000)).filter((l) =>
        l.attributes.eventId?.startsWith(eventId),
      )
    : [];
  const id = oneEventId(eventId, [
    ...candidates.map((c) => c.line.eventId),
    ...letters.map((l) => l.attributes.eventId),
  ]);
  const found = candidates.find((c) => c.line.eventId === id);
  const line = found?.line;
  const base = {
    eventId: id ?? eventId,
    trigger: line?.trigger,
    appId: line?.appId,
    receivedAt: line?.receivedAt,
    key: found?.key,
    ...(line?.erasure ? { erasure: line.erasure } : {}),
  };
  if (found?.source === "quarantine") return { ...base, outcome: "quarantined", error: found.error };
  const dead = letters.find((l) => l.attributes.eventId === id);
  if (dead)
    return {
      ...base,
      trigger: base.trigger ?? dead.attributes.trigger,
      appId: base.appId ?? dead.attributes.appId,
      outcome: "dead-lettered",
      note: `${dead.receiveCount} receives`,
    };
  if (!line)
    return {
      ...base,
      outcome: "pending",
      note: `in neither the archive, the quarantine nor the DLQ: not yet processed (or never accepted); looked in ${searched} and the DLQ`,
    };
  return { ...base, ...(await judgeArchived(line, stores)) };
}

/**
 * What an archived event did, judged by the pure projections against the items as they are:
 * archived-only, projected or stale (with each item it touches), or pending. A line an erasure
 * redacted is `redacted`, not judged: it was projected before the erasure, which then rewrote the
 * items it had led to (deleting the erased user's presence and memberships), so an item "without
 * it" is the erasure's doing, not an event still to come; and a replay skips it (`replayArchive`).
 *
 * @example await judgeArchived({ …, erasure: "3f9c…" }, stores) // { outcome: "redacted", erasure: "3f9c…", note: "projected before the erasure, …" }
 */
export async function judgeArchived(
  line: RawArchiveLine,
  stores: ProjectionStores,
): Promise<Omit<EventTrace, "eventId" | "trigger" | "appId" | "receivedAt" | "key">> {
  if (line.erasure)
    return {
      outcome: "redacted",
      erasure: line.erasure,
      // The erasure's id is in `erasure` (which `query event` and the console print on their own line): not repeated.
      note: "projected before the erasure, which then rewrote its items; a replay skips it",
    };
  const parsed = parseEventBody(line.body);
  const refusal = refusalOf(parsed);
  if (refusal !== undefined)
    return {
      outcome: "pending",
      error: refusal,
      note: `archived, to be quarantined (${parsed.kind === "invalid" ? "invalid" : "refused"})`,
    };
  if (parsed.kind !== "known") return { outcome: "archived-only" };
  const input = projectionInput(parsed.event, line.eventId, line.receivedAt);
  const items = (
    await Promise.all(
      tableBindings(stores).map(({ projection, store }) => itemStates(projection, store, input)),
    )
  ).flat();
  if (items.length === 0) return { outcome: "archived-only" };
  const recording = await recordingOf(parsed.event, input, stores);
  const judged = { items, ...(recording ? { recording } : {}) };
  if (items.some((i) => i.state === "does not have it yet"))
    return { ...judged, outcome: "pending", note: "archived, not (yet) in every item it touches" };
  return { ...judged, outcome: items.some((i) => i.state === "includes it") ? "projected" : "stale" };
}
