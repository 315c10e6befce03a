import { type RecordingJob, recordingJobAttributes } from "../contracts/queue-messages";
import { sessionIdOf } from "../events/accessors";
import { dedupeKey } from "../events/dedupe";
import { eventTime } from "../events/event-time";
import { type KnownEvent, parseWebhookEvent } from "../events/schemas";
import type { ProjectionOutcome } from "../platform/outcomes";
import type { BlobStore } from "../ports/blob-store";
import type { ApplyResult, ItemStore } from "../ports/item-store";
import type { MessageQueue } from "../ports/message-queue";
import { canonicalJson } from "../projections/canonical-json";
import { type GroupState, groupsProjection } from "../projections/groups";
import { type MembershipState, membershipsProjection } from "../projections/memberships";
import { type PresenceState, presenceProjection } from "../projections/presence";
import { type SessionState, sessionsProjection } from "../projections/sessions";
import type { ItemKey, Projection, ProjectionInput, SeenEvents } from "../projections/types";
import { type Version, versionOf, versionTime } from "../projections/version";
import type { QueuedEvent } from "./queued-event";
import { quarantine } from "./raw-archive";

export interface ProjectionStores {
  groups: ItemStore<GroupState>;
  memberships: ItemStore<MembershipState>;
  presence: ItemStore<PresenceState>;
  sessions: ItemStore<SessionState>;
}

export interface ProjectorDependencies {
  stores: ProjectionStores;
  /** Raw archive, quarantine, and where oversize bodies are read from. */
  dataStore: BlobStore;
  recordingJobs: MessageQueue;
  now: () => number;
}

/**
 * What the projections are given for an event: its time (payload or receipt) and its version.
 *
 * @example projectionInput(event, eventId, receivedAt).version // "001696932915000.5f0c…"
 */
export function projectionInput(event: KnownEvent, eventId: string, receivedAt: number): ProjectionInput {
  const time = eventTime(event, receivedAt);
  return {
    event,
    eventId,
    receivedAt,
    eventTimeMs: time.ms,
    timeSource: time.source,
    version: versionOf(time.ms, dedupeKey(event, eventId)),
  };
}

/** How many recent event ids an item remembers (the platform retries twice within 40 s). */
export const SEEN_EVENTS_KEPT = 16;

/** Adds an event id to an item's memory, keeping the most recent by version. */
export function rememberEvent(seen: SeenEvents | undefined, eventId: string, version: Version): SeenEvents {
  const entries = Object.entries({ ...seen, [eventId]: version });
  entries.sort((a, b) => (a[1] < b[1] ? 1 : a[1] > b[1] ? -1 : a[0].localeCompare(b[0])));
  return Object.fromEntries(entries.slice(0, SEEN_EVENTS_KEPT));
}

/**
 * Wraps a projection's evolve for one event. For an event versioned by its receipt time, an event
 * id the item has already applied is re-applied at its first version, so a platform retry (same
 * bytes, later receipt) changes nothing.
 */
export function evolveOnce<S extends { pk: string; seen?: SeenEvents }, E extends KnownEvent>(
  projection: Projection<S, E>,
  input: ProjectionInput<E>,
  key: ItemKey,
): (state: S | null) => S {
  return (state) => {
    if (input.timeSource !== "receivedAt") return projection.evolve(state, input, key);
    const prior = state?.seen?.[input.eventId];
    const effective = prior ? { ...input, version: prior, eventTimeMs: versionTime(prior) } : input;
    const next = projection.evolve(state, effective, key);
    return { ...next, seen: rememberEvent(state?.seen, input.eventId, effective.version) };
  };
}

/** Applies a projection to every item an event touches; undefined when it does not handle the event. */
async function applyProjection<S extends { pk: string; seen?: SeenEvents }, E extends KnownEvent>(
  projection: Projection<S, E>,
  store: ItemStore<S>,
  input: ProjectionInput,
): Promise<ApplyResult<S>[] | undefined> {
  if (!projection.handles(input.event)) return undefined;
  const typed = input as ProjectionInput<E>;
  return Promise.all(
    projection.keys(typed).map((key) => store.apply(key, evolveOnce(projection, typed, key))),
  );
}

/** Changed: more than the memory of seen event ids (which a stale event also updates). */
function changed(results: readonly ApplyResult<object>[]): boolean {
  return results.some(({ before, after }) => before === null || withoutSeen(before) !== withoutSeen(after));
}

function withoutSeen(state: object): string {
  const { seen: _seen, ...rest } = state as { seen?: SeenEvents };
  return canonicalJson(rest);
}

/**
 * Projects one known event into every table that handles it. Returns "projected" if any item
 * changed, "stale" if every item was already newer or equal (a late or repeated event), and
 * "archived-only" if no table handles it.
 */
export async function projectKnownEvent(
  event: KnownEvent,
  queued: Pick<QueuedEvent, "eventId" | "receivedAt">,
  deps: ProjectorDependencies,
): Promise<ProjectionOutcome> {
  const input = projectionInput(event, queued.eventId, queued.receivedAt);
  const { stores } = deps;
  const [groups, memberships, presence, sessions] = await Promise.all([
    applyProjection(groupsProjection, stores.groups, input),
    applyProjection(membershipsProjection, stores.memberships, input),
    applyProjection(presenceProjection, stores.presence, input),
    applyProjection(sessionsProjection, stores.sessions, input),
  ]);
  if (event.trigger === "recording_generated")
    await sendRecordingJob(event, sessions?.[0]?.after, queued.eventId, deps);
  const handled = [groups, memberships, presence, sessions].filter((a) => a !== undefined);
  if (handled.length === 0) return "archived-only";
  return handled.some(changed) ? "projected" : "stale";
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
  await deps.recordingJobs.send({ body: JSON.stringify(job), attributes: recordingJobAttributes(job) });
}

/**
 * Handles one decoded event: parse, then project, archive-only or quarantine. Throws only for
 * failures worth retrying (DynamoDB, S3, SQS): the record then goes back to the queue.
 */
export async function handleQueuedEvent(
  queued: QueuedEvent,
  deps: ProjectorDependencies,
): Promise<ProjectionOutcome> {
  let json: unknown;
  try {
    json = JSON.parse(queued.body);
  } catch {
    await quarantine(queued, "body is not valid JSON", deps.dataStore, deps.now);
    return "quarantined";
  }
  const parsed = parseWebhookEvent(json);
  if (parsed.kind === "invalid") {
    await quarantine(queued, parsed.error, deps.dataStore, deps.now);
    return "quarantined";
  }
  if (parsed.kind === "unknown") return "archived-only";
  return projectKnownEvent(parsed.event, queued, deps);
}
