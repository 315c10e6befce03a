import { isCallMessageEvent, isSessionEvent, type SessionEvent, sessionIdOf } from "../events/accessors.ts";
import type { Occupant } from "../events/resources.ts";
import { canonicalJson } from "./canonical-json.ts";
import { appKey, monthBucket, RECORDING_SHARDS, shardKey } from "./keys.ts";
import type { Fallbacks, Projection, ProjectionInput, SeenEvents } from "./types.ts";
import {
  comparableVersion,
  isNewer,
  maxDefined,
  minDefined,
  type Version,
  versionFactId,
} from "./version.ts";

/** One stint of one occupant: occupants have names, not uids; a name may join several times. */
export interface Participant {
  name: string;
  joinedAt: number;
  leftAt?: number;
  audioCall?: boolean;
  /** Listed in `all_occupants` by the latest end event (the platform's final roster). */
  atEnd?: true;
}

export type RecordingStatus = "pending" | "archived" | "failed";

/**
 * What a keyed entry (a recording by startTime, a transcript by its key) remembers of the facts
 * about it, so that the latest version wins whatever the order (#57): `v`, the version of the fact
 * it shows, at that fact's earliest receipt; `alt`, every other fact about the key (version and
 * fields), highest first, absent when there is none. Two facts for one key are rare (a recording
 * sent again with another file): each entry remembers all of them, with no bound. Bookkeeping, not
 * fact fields (`factFields` leaves them out).
 */
export interface KeyedFacts<F> {
  v?: Version;
  alt?: Array<{ v: Version; f: F }>;
}

/** The fields of a recording that its `recording_generated` writes. */
export interface RecordingFacts {
  recordingDate: string;
  duration: number;
  startTime: number;
  /** The URL without its query string (which may hold a signature). */
  sourceUrl: string;
}

/** A recording of the session and what became of its archive. */
export interface RecordingState extends KeyedFacts<RecordingFacts> {
  recordingDate: string;
  duration: number;
  startTime: number;
  /** The URL without its query string (which may hold a signature). */
  sourceUrl: string;
  status: RecordingStatus;
  attempts: number;
  bucket?: string;
  key?: string;
  size?: number;
  sha256?: string;
  contentType?: string;
  archivedAt?: number;
  failureReason?: string;
  failureDetail?: string;
}

/** A transcript of the session (`transcription_generated`): where the platform serves it. */
export interface TranscriptState extends KeyedFacts<TranscriptFacts>, TranscriptFacts {}

/** The fields of a transcript that its `transcription_generated` writes. */
export interface TranscriptFacts {
  /** The URL without its query string (which may hold a signature). */
  sourceUrl: string;
  transcriptDate?: string;
  /** Epoch seconds, when the payload says. */
  startTime?: number;
  endTime?: number;
}

export type SessionOutcome = "initiated" | "busy" | "cancelled" | "rejected" | "unanswered" | "ended";

/**
 * A call or meeting (the `sessions` table). Parts and their rules:
 * - initiation (initiator, receiver, conversationId, callType, initiatedAt): latest call_initiated;
 * - outcome: the latest of call_initiated, the call outcomes (busy, cancelled, …) and the end;
 * - startedAt: the earliest start reported (a min); endedAt and the `atEnd` marks: the latest end
 *   event, final: participant events never change them;
 * - participants: a union keyed by name and join time; leftAt is the latest reported (a max);
 *   the end event's all_occupants are merged in (the reconciliation point), and the stints the
 *   latest end listed are marked `atEnd` (each stint is stored once, not copied into a roster);
 * - recordings: keyed by startTime; the recorder's outcome is applied with `applyRecordingOutcome`;
 * - transcripts: keyed by transcript id (else start time), a union (the URL's query dropped).
 * Every rule is a max, a min, a union or "latest version wins": the result does not depend on
 * the order or the repetition of events.
 */
export interface SessionState {
  pk: string;
  appId: string;
  sessionId: string;
  kind?: "call" | "meet";
  initiator?: string;
  receiver?: string;
  receiverType?: string;
  conversationId?: string;
  callType?: string;
  initiatedAt?: number;
  outcome?: SessionOutcome;
  startedAt?: number;
  endedAt?: number;
  durationSeconds?: number;
  participants: Record<string, Participant>;
  /**
   * Set once the stints did not all fit on the item (`SESSION_PARTICIPANTS_MAX_BYTES`): the
   * earliest ones are kept; every stint stays in the raw archive.
   */
  participantsOmitted?: true;
  recordings: Record<string, RecordingState>;
  /** Transcripts, keyed by transcript id (else start time); absent until the first. */
  transcripts?: Record<string, TranscriptState>;
  /** Earliest event time seen for the session (ms). */
  firstEventAt: number;
  /** Earliest known time of the session (ms): the sort key of the time indexes. */
  sessionTime: number;
  initiatorKey?: string;
  receiverKey?: string;
  /** `byTime` index key: the app and the UTC month of sessionTime. */
  timeBucket?: string;
  recordingShard?: string;
  versions: { initiation?: Version; outcome?: Version; end?: Version };
  seen?: SeenEvents;
  /** Each part's runner-ups (`Projection.parts`). */
  fallback?: Fallbacks;
}

function toParticipant(occupant: Occupant): Participant {
  return {
    name: occupant.name,
    joinedAt: occupant.joined_at * 1000,
    leftAt: occupant.left_at === undefined ? undefined : occupant.left_at * 1000,
    audioCall: occupant.audio_call === "true",
  };
}

/** Merge key of a participant stint. */
function participantKey(p: { name: string; joinedAt: number }): string {
  return `${p.name}|${p.joinedAt}`;
}

function mergeParticipant(participants: Record<string, Participant>, incoming: Participant): void {
  const key = participantKey(incoming);
  const current = participants[key];
  participants[key] = {
    name: incoming.name,
    joinedAt: incoming.joinedAt,
    leftAt: maxDefined(current?.leftAt, incoming.leftAt),
    // Any report of a video stint makes it video: a commutative choice.
    audioCall: (current?.audioCall ?? true) && (incoming.audioCall ?? true),
    ...(current?.atEnd ? { atEnd: true } : {}),
  };
}

/**
 * The room a session's stints may take on its item (an estimate of their stored bytes), well under
 * DynamoDB's 400 KB item limit with the rest of the session: a meeting of a few thousand stints
 * (names ~30 characters) fits whole; a larger one keeps its earliest stints.
 */
export const SESSION_PARTICIPANTS_MAX_BYTES = 256_000;

/** A stint's stored size as estimated for the bound: its key and name, and room for the rest. */
function stintBytes(key: string, participant: Participant): number {
  return Buffer.byteLength(key) + Buffer.byteLength(participant.name) + 96;
}

/**
 * Keeps the earliest stints (by join time, then key) that fit in `SESSION_PARTICIPANTS_MAX_BYTES`,
 * and marks the session when some did not. The kept set depends only on the union of the stints
 * reported, never on their order: a stint is dropped only when the earlier ones fill the room,
 * and they always will.
 */
function boundParticipants(next: SessionState): void {
  const entries = Object.entries(next.participants);
  let total = 0;
  for (const [key, participant] of entries) total += stintBytes(key, participant);
  if (total <= SESSION_PARTICIPANTS_MAX_BYTES) return;
  entries.sort(([ka, a], [kb, b]) => a.joinedAt - b.joinedAt || (ka < kb ? -1 : ka > kb ? 1 : 0));
  const kept: Record<string, Participant> = {};
  let used = 0;
  for (const [key, participant] of entries) {
    used += stintBytes(key, participant);
    if (used > SESSION_PARTICIPANTS_MAX_BYTES) break;
    kept[key] = participant;
  }
  next.participants = kept;
  next.participantsOmitted = true;
}

/** Strips the query string and fragment of a URL (they may hold signatures or tokens). */
export function withoutQuery(url: string): string {
  const cut = url.search(/[?#]/);
  return cut < 0 ? url : url.slice(0, cut);
}

function derive(next: SessionState): SessionState {
  boundParticipants(next);
  const joined = Object.values(next.participants).map((p) => p.joinedAt);
  const recordingTimes = Object.values(next.recordings).map((r) => r.startTime * 1000);
  const candidates = [
    next.firstEventAt,
    next.initiatedAt,
    next.startedAt,
    ...joined,
    ...recordingTimes,
  ].filter((t): t is number => t !== undefined);
  next.sessionTime = Math.min(...candidates);
  next.durationSeconds =
    next.endedAt !== undefined && next.startedAt !== undefined
      ? Math.max(0, Math.round((next.endedAt - next.startedAt) / 1000))
      : undefined;
  next.initiatorKey = next.initiator ? appKey(next.appId, next.initiator) : undefined;
  next.receiverKey = next.receiver ? appKey(next.appId, next.receiver) : undefined;
  next.timeBucket = monthBucket(next.appId, next.sessionTime);
  next.recordingShard = Object.keys(next.recordings).length
    ? shardKey(next.appId, next.sessionId, RECORDING_SHARDS)
    : undefined;
  return next;
}

function copy(
  state: SessionState | null,
  appId: string,
  sessionId: string,
  eventTimeMs: number,
): SessionState {
  return {
    ...(state ?? { sessionTime: eventTimeMs }),
    firstEventAt: minDefined(state?.firstEventAt, eventTimeMs) ?? eventTimeMs,
    pk: appKey(appId, sessionId),
    appId,
    sessionId,
    participants: { ...state?.participants },
    recordings: { ...state?.recordings },
    versions: { ...state?.versions },
  };
}

const RECORDING_FACT_FIELDS = ["recordingDate", "duration", "startTime", "sourceUrl"] as const;
const TRANSCRIPT_FACT_FIELDS = ["sourceUrl", "transcriptDate", "startTime", "endTime"] as const;

/**
 * A transcript's key on its session: its `tid`, else its `startTime`, else its URL without the
 * query (`url <sourceUrl>`). Never empty: DynamoDB refuses an empty map key, and the schema
 * accepts a transcript with neither id (#57).
 *
 * @example transcriptKey({ transcript_url: "https://f.example/t.txt?sig=1" }) // "url https://f.example/t.txt"
 */
export function transcriptKey(data: {
  tid?: string;
  startTime?: number | string;
  transcript_url: string;
}): string {
  if (data.tid) return data.tid;
  if (data.startTime !== undefined && String(data.startTime) !== "") return String(data.startTime);
  return `url ${withoutQuery(data.transcript_url)}`;
}

/**
 * The facts about one keyed entry once `input`'s is added: each fact once, at its lowest version
 * (its earliest receipt: a platform retry is the same fact), the highest shown (`f`, `v`), the
 * others kept (`alt`). A function of the set of facts, whatever the order. An entry written before
 * #57 (no `v`) counts as one fact of the lowest version.
 */
function latestOfKey<F extends object>(
  current: (KeyedFacts<F> & Partial<F>) | undefined,
  fields: readonly (keyof F)[],
  facts: F,
  input: ProjectionInput<SessionEvent>,
): { f: F; v: Version; alt?: Array<{ v: Version; f: F }> } {
  const pick = (entry: Partial<F>) => Object.fromEntries(fields.map((k) => [k, entry[k]])) as F;
  // An entry written before #57 that shows these very fields is this fact: it is not kept twice.
  const legacy = current && current.v === undefined && canonicalJson(pick(current)) !== canonicalJson(facts);
  const known = current
    ? [
        ...(current.v !== undefined || legacy ? [{ v: current.v ?? "", f: pick(current) }] : []),
        ...(current.alt ?? []),
      ]
    : [];
  const id = versionFactId(input.version);
  const earliest = known.find((k) => k.v !== "" && versionFactId(k.v) === id);
  // A copy's version is its fact's at this receipt; the earliest copy's is the lowest.
  const version =
    earliest && comparableVersion(earliest.v) < comparableVersion(input.version) ? earliest.v : input.version;
  const all = [...known.filter((k) => k !== earliest), { v: version, f: facts }].sort((a, b) =>
    comparableVersion(a.v) < comparableVersion(b.v)
      ? 1
      : comparableVersion(a.v) > comparableVersion(b.v)
        ? -1
        : 0,
  );
  const [top, ...rest] = all as [{ v: Version; f: F }, ...Array<{ v: Version; f: F }>];
  return { f: top.f, v: top.v, ...(rest.length ? { alt: rest } : {}) };
}

const OUTCOME_OF: Partial<Record<SessionEvent["trigger"], SessionOutcome>> = {
  call_initiated: "initiated",
  call_busy: "busy",
  call_cancelled: "cancelled",
  call_rejected: "rejected",
  call_unanswered: "unanswered",
  call_ended: "ended",
  meeting_ended: "ended",
};

/**
 * Applies one session event. The caller guarantees the event has a session id.
 *
 * @example evolveSession(null, callStartedInput, "s1").startedAt // 1696934572000
 */
export function evolveSession(
  state: SessionState | null,
  input: ProjectionInput<SessionEvent>,
  sessionId: string,
): SessionState {
  const { event, version, eventTimeMs } = input;
  const next = copy(state, event.appId, sessionId, eventTimeMs);
  const { versions } = next;
  // One id reported both as a call and as a meeting (the platform's ids make it a collision): a
  // meeting, whichever fact is processed last (a max: meet over call, docs/tables.md).
  const kind = isCallMessageEvent(event) ? "call" : "type" in event ? event.type : undefined;
  if (kind === "meet" || (kind === "call" && next.kind !== "meet")) next.kind = kind;

  const outcome = OUTCOME_OF[event.trigger];
  if (outcome && isNewer(versions.outcome, version)) {
    next.outcome = outcome;
    versions.outcome = version;
  }

  if (isCallMessageEvent(event)) {
    if (event.trigger === "call_initiated" && isNewer(versions.initiation, version)) {
      const call = event.data.call;
      const on = call.data.entities?.on?.entity;
      next.initiator = call.data.entities?.by?.entity.uid ?? call.sender;
      next.receiver = call.data.entities?.for?.entity.uid ?? call.receiver;
      next.receiverType = call.receiverType;
      next.conversationId = call.conversationId;
      next.callType = on?.type ?? call.type;
      next.initiatedAt = (on?.initiatedAt ?? call.sentAt) * 1000;
      versions.initiation = version;
    }
    return derive(next);
  }

  switch (event.trigger) {
    case "call_started":
    case "meeting_started":
      next.startedAt = minDefined(next.startedAt, event.data.created_at * 1000);
      break;
    case "call_participant_joined":
    case "meeting_participant_joined":
    case "call_participant_left":
    case "meeting_participant_left":
      mergeParticipant(next.participants, toParticipant(event.data.occupant));
      break;
    case "call_ended":
    case "meeting_ended": {
      next.startedAt = minDefined(next.startedAt, event.data.created_at * 1000);
      for (const occupant of event.data.all_occupants)
        mergeParticipant(next.participants, toParticipant(occupant));
      if (isNewer(versions.end, version)) {
        next.endedAt = event.data.destroyed_at * 1000;
        const listed = new Set(event.data.all_occupants.map((o) => participantKey(toParticipant(o))));
        for (const [key, participant] of Object.entries(next.participants)) {
          const { atEnd: _, ...rest } = participant;
          next.participants[key] = listed.has(key) ? { ...rest, atEnd: true } : rest;
        }
        versions.end = version;
      }
      break;
    }
    case "recording_generated": {
      const { data } = event;
      const current = next.recordings[data.startTime];
      const facts: RecordingFacts = {
        recordingDate: data.recordingDate,
        duration: Number(data.duration),
        startTime: Number(data.startTime),
        sourceUrl: withoutQuery(data.recording_url),
      };
      const { f, ...memory } = latestOfKey(current, RECORDING_FACT_FIELDS, facts, input);
      next.recordings[data.startTime] = { attempts: 0, status: "pending", ...current, ...f, ...memory };
      break;
    }
    case "transcription_generated": {
      const { data } = event;
      const seconds = (v: number | string | undefined) => (v === undefined ? undefined : Number(v));
      const facts: TranscriptFacts = {
        sourceUrl: withoutQuery(data.transcript_url),
        transcriptDate: data.transcriptDate,
        startTime: seconds(data.startTime),
        endTime: seconds(data.endTime),
      };
      const key = transcriptKey(data);
      const { f, ...memory } = latestOfKey(next.transcripts?.[key], TRANSCRIPT_FACT_FIELDS, facts, input);
      next.transcripts = { ...next.transcripts, [key]: { ...f, ...memory } };
      break;
    }
  }
  return derive(next);
}

/** What the recorder reports about one recording. */
export type RecordingOutcome =
  | {
      status: "archived";
      bucket: string;
      key: string;
      size: number;
      sha256: string;
      contentType: string;
      archivedAt: number;
      attempt: number;
    }
  | { status: "failed"; reason: string; detail?: string; attempt: number; final: boolean; at: number };

/**
 * Records the recorder's outcome on the session. Archived is final: a later failure report (a
 * stale redelivery) does not undo it. Attempts only grow.
 *
 * @example applyRecordingOutcome(session, "1696937627", { status: "archived", ... }).recordings["1696937627"].status
 */
export function applyRecordingOutcome(
  state: SessionState,
  startTime: string,
  outcome: RecordingOutcome,
): SessionState {
  const current = state.recordings[startTime];
  if (!current) return state;
  const attempts = Math.max(current.attempts, outcome.attempt);
  let recording: RecordingState;
  if (current.status === "archived") recording = { ...current, attempts };
  else if (outcome.status === "archived") {
    const { status, bucket, key, size, sha256, contentType, archivedAt } = outcome;
    recording = {
      ...current,
      status,
      bucket,
      key,
      size,
      sha256,
      contentType,
      archivedAt,
      attempts,
      failureReason: undefined,
      failureDetail: undefined,
    };
  } else
    recording = {
      ...current,
      status: "failed",
      failureReason: outcome.reason,
      failureDetail: outcome.detail,
      attempts,
    };
  return { ...state, recordings: { ...state.recordings, [startTime]: recording } };
}

export const sessionsProjection: Projection<SessionState, SessionEvent> = {
  name: "sessions",
  handles: (event): event is SessionEvent => isSessionEvent(event) && sessionIdOf(event) !== undefined,
  keys: ({ event }) => [{ pk: appKey(event.appId, sessionIdOf(event) ?? "") }],
  evolve: (state, input) => evolveSession(state, input, sessionIdOf(input.event) ?? ""),
  // Payload-timed (seconds): a platform retry matters only against a fact of the same second and
  // rank. The end's marks on the stints are not a part's fields: two different end events of one
  // session in one second are not made exact by a runner-up (docs/design-and-limits.md).
  parts: {
    initiation: ["initiator", "receiver", "receiverType", "conversationId", "callType", "initiatedAt"],
    outcome: ["outcome"],
  },
};
