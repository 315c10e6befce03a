import { createHash } from "node:crypto";
import type { SQSRecord } from "aws-lambda";
import type { BlobStore } from "./adapters/blob-store";
import type { MessageQueue } from "./adapters/event-queue";
import { type ApplyResult, canonicalJson, type ItemStore } from "./adapters/item-store";
import { BODY_LOCATION_S3, MESSAGE_ATTRIBUTE, S3_PREFIX } from "./constants";
import { sessionIdOf } from "./events/accessors";
import { dedupeKey } from "./events/dedupe";
import { eventTime } from "./events/event-time";
import { type KnownEvent, parseWebhookEvent } from "./events/schemas";
import { type GroupState, groupsProjection } from "./projections/groups";
import { type MembershipState, membershipsProjection } from "./projections/memberships";
import { type PresenceState, presenceProjection } from "./projections/presence";
import { type SessionState, sessionsProjection } from "./projections/sessions";
import type { ItemKey, Projection, ProjectionInput, SeenEvents } from "./projections/types";
import { type Version, versionOf, versionTime } from "./projections/version";

/** An event taken off the events queue, its body resolved (from S3 for an oversize pointer). */
export interface QueuedEvent {
  messageId: string;
  eventId: string;
  receivedAt: number;
  trigger: string;
  appId: string | undefined;
  /** The raw body, as the platform sent it. */
  body: string;
}

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

/** Where each event ended: the counters of the "nothing lost" invariant. */
export type ProjectionOutcome = "projected" | "stale" | "archived-only" | "quarantined";

/** A job for the recorder: one recording to fetch. */
export interface RecordingJob {
  appId: string;
  sessionId: string;
  startTime: string;
  recordingDate: string;
  recordingUrl: string;
  eventId: string;
}

function attribute(record: SQSRecord, name: string): string | undefined {
  return record.messageAttributes?.[name]?.stringValue;
}

/**
 * Reads one queue message back into the event it carries. Messages without attributes (sent by
 * hand, or redriven by a tool that dropped them) fall back to the body hash and SQS's sent time.
 */
export async function decodeRecord(record: SQSRecord, dataStore: BlobStore): Promise<QueuedEvent> {
  let body = record.body;
  if (attribute(record, MESSAGE_ATTRIBUTE.bodyLocation) === BODY_LOCATION_S3) {
    const pointer = JSON.parse(record.body) as { key?: unknown };
    if (typeof pointer.key !== "string") throw new Error("oversize pointer without a key");
    body = await dataStore.getText(pointer.key);
  }
  const receivedAt = Number(
    attribute(record, MESSAGE_ATTRIBUTE.receivedAt) ?? record.attributes?.SentTimestamp,
  );
  return {
    messageId: record.messageId,
    eventId: attribute(record, MESSAGE_ATTRIBUTE.eventId) ?? createHash("sha256").update(body).digest("hex"),
    receivedAt: Number.isFinite(receivedAt) ? receivedAt : 0,
    trigger: attribute(record, MESSAGE_ATTRIBUTE.trigger) ?? "(unknown)",
    appId: attribute(record, MESSAGE_ATTRIBUTE.appId),
    body,
  };
}

function datePath(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function appSegment(appId: string | undefined): string {
  return encodeURIComponent(appId ?? "_none");
}

/**
 * The raw archive: one NDJSON object per (app, day) in a batch, under
 * `raw/app=<appId>/date=<yyyy-mm-dd>/<hash of the batch's event ids>.ndjson`; each line holds the
 * eventId, receivedAt, trigger, appId and the raw body. A retried batch rewrites the same key;
 * a batch split differently may archive an event twice, which replay deduplicates by eventId.
 */
export async function archiveBatch(events: readonly QueuedEvent[], store: BlobStore): Promise<string[]> {
  const groups = new Map<string, QueuedEvent[]>();
  for (const event of events) {
    const prefix = `${S3_PREFIX.raw}app=${appSegment(event.appId)}/date=${datePath(event.receivedAt)}/`;
    groups.set(prefix, [...(groups.get(prefix) ?? []), event]);
  }
  const keys: string[] = [];
  await Promise.all(
    [...groups].map(async ([prefix, group]) => {
      const ids = group.map((e) => e.eventId).sort();
      const key = `${prefix}${createHash("sha256").update(ids.join("\n")).digest("hex").slice(0, 32)}.ndjson`;
      const lines = group.map((e) =>
        JSON.stringify({
          eventId: e.eventId,
          receivedAt: e.receivedAt,
          trigger: e.trigger,
          appId: e.appId,
          body: e.body,
        }),
      );
      await store.put(key, `${lines.join("\n")}\n`, { contentType: "application/x-ndjson" });
      keys.push(key);
    }),
  );
  return keys;
}

/** `quarantine/app=<appId>/date=<day>/<eventId>.json`: the raw body with why it was refused. */
export async function quarantine(
  event: QueuedEvent,
  error: string,
  deps: ProjectorDependencies,
): Promise<void> {
  const key = `${S3_PREFIX.quarantine}app=${appSegment(event.appId)}/date=${datePath(event.receivedAt)}/${event.eventId}.json`;
  const record = { ...event, error, quarantinedAt: deps.now() };
  await deps.dataStore.put(key, JSON.stringify(record), { contentType: "application/json" });
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
  await deps.recordingJobs.send({
    body: JSON.stringify(job),
    attributes: { appId: event.appId, sessionId, eventId },
  });
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
    await quarantine(queued, "body is not valid JSON", deps);
    return "quarantined";
  }
  const parsed = parseWebhookEvent(json);
  if (parsed.kind === "invalid") {
    await quarantine(queued, parsed.error, deps);
    return "quarantined";
  }
  if (parsed.kind === "unknown") return "archived-only";
  return projectKnownEvent(parsed.event, queued, deps);
}
