import {
  type CallMessageEvent,
  isCallMessageEvent,
  isSessionEvent,
  type SessionEvent,
  sessionIdOf,
} from "@webhook-backend/stream/events/accessors";
import type { EventOf } from "@webhook-backend/stream/events/schemas";
import { appKey, monthBucket, RECORDING_SHARDS, shardKey } from "@webhook-backend/stream/projections/keys";
import { type Fact, latest } from "./facts";
import type { Item } from "./tables";

/*
 * The sessions table's reference (tables.md:14, :78): a call or meeting from every fact about its
 * session id, each rule a max, a min, a union or the latest fact. Not modelled: the roster's bound
 * (over ~256 KB of stints, tables.md:78), which no drawn history reaches.
 */

const OUTCOME_OF: Record<string, string> = {
  call_initiated: "initiated",
  call_busy: "busy",
  call_cancelled: "cancelled",
  call_rejected: "rejected",
  call_unanswered: "unanswered",
  call_ended: "ended",
  meeting_ended: "ended",
};
const ENDS = ["call_ended", "meeting_ended"];
const STARTS = ["call_started", "meeting_started"];
const STINTS = [
  "call_participant_joined",
  "meeting_participant_joined",
  "call_participant_left",
  "meeting_participant_left",
];

type Occupant = EventOf<"call_participant_joined">["data"]["occupant"];
type Ended = EventOf<"call_ended">;

/** A URL without its query or fragment (tables.md: recordings and transcripts keep no signature). */
const withoutQuery = (url: string) => url.split(/[?#]/)[0] ?? url;

/** A session's participants: a union keyed by name + join time; `leftAt` the maximum; video if any report says so (tables.md:78). */
function participants(all: readonly Fact[], end: Fact | undefined): Record<string, Item> {
  const reports: Occupant[] = [];
  for (const f of all) {
    if (STINTS.includes(f.event.trigger))
      reports.push((f.event as EventOf<"call_participant_joined">).data.occupant);
    if (ENDS.includes(f.event.trigger)) reports.push(...(f.event as Ended).data.all_occupants);
  }
  const key = (o: Occupant) => `${o.name}|${o.joined_at * 1000}`;
  const listed = new Set(end ? (end.event as Ended).data.all_occupants.map(key) : []);
  const out: Record<string, Item> = {};
  for (const k of new Set(reports.map(key))) {
    const same = reports.filter((o) => key(o) === k);
    const left = same.flatMap((o) => (o.left_at === undefined ? [] : [o.left_at * 1000]));
    const first = same[0] as Occupant;
    out[k] = {
      name: first.name,
      joinedAt: first.joined_at * 1000,
      leftAt: left.length ? Math.max(...left) : undefined,
      audioCall: same.every((o) => o.audio_call === "true"),
      // The stints the latest end event listed are marked (tables.md:78).
      ...(listed.has(k) ? { atEnd: true } : {}),
    };
  }
  return out;
}

/** Per key, the latest fact about it (tables.md:78: two different facts for one key, the latest version). */
function latestByKey(facts: readonly Fact[], keyOf: (f: Fact) => string): Map<string, Fact> {
  const keys = new Map<string, Fact[]>();
  for (const f of facts) keys.set(keyOf(f), [...(keys.get(keyOf(f)) ?? []), f]);
  return new Map([...keys].map(([k, list]) => [k, latest(list) as Fact]));
}

/** tables.md:78: a transcript's key is its `tid`, else its `startTime`, else `url <url without query>`. */
function transcriptKey(f: Fact): string {
  const d = (f.event as EventOf<"transcription_generated">).data;
  if (d.tid) return d.tid;
  if (d.startTime !== undefined && String(d.startTime) !== "") return String(d.startTime);
  return `url ${withoutQuery(d.transcript_url)}`;
}

/** One session's item, with the end event `end` as its final end (`undefined`: none). */
function session(appId: string, sessionId: string, all: readonly Fact[], end: Fact | undefined): Item {
  const events = (trigger: string[]) => all.filter((f) => trigger.includes(f.event.trigger));
  const initiation = latest(events(["call_initiated"]));
  const outcome = latest(events(Object.keys(OUTCOME_OF)));
  // `startedAt`: the earliest reported start (a start, or an end's `created_at`).
  const starts = events([...STARTS, ...ENDS]).map(
    (f) => (f.event as EventOf<"call_started">).data.created_at * 1000,
  );
  const startedAt = starts.length ? Math.min(...starts) : undefined;
  const endedAt = end ? (end.event as Ended).data.destroyed_at * 1000 : undefined;
  // `kind`: meet once any fact says meet, else call (tables.md:78).
  const kinds = all.map((f) => (isCallMessageEvent(f.event) ? "call" : (f.event as { type?: string }).type));
  const kind = kinds.includes("meet") ? "meet" : kinds.includes("call") ? "call" : undefined;
  const call = initiation ? (initiation.event as CallMessageEvent).data.call : undefined;
  const on = call?.data.entities?.on?.entity;
  const recordings = Object.fromEntries(
    [
      ...latestByKey(
        events(["recording_generated"]),
        (f) => (f.event as EventOf<"recording_generated">).data.startTime,
      ),
    ].map(([k, f]) => {
      const d = (f.event as EventOf<"recording_generated">).data;
      return [
        k,
        {
          recordingDate: d.recordingDate,
          duration: Number(d.duration),
          startTime: Number(d.startTime),
          sourceUrl: withoutQuery(d.recording_url),
        },
      ];
    }),
  );
  const transcriptFacts = events(["transcription_generated"]);
  const seconds = (v: number | string | undefined) => (v === undefined ? undefined : Number(v));
  const transcripts = transcriptFacts.length
    ? Object.fromEntries(
        [...latestByKey(transcriptFacts, transcriptKey)].map(([k, f]) => {
          const d = (f.event as EventOf<"transcription_generated">).data;
          return [
            k,
            {
              sourceUrl: withoutQuery(d.transcript_url),
              transcriptDate: d.transcriptDate,
              startTime: seconds(d.startTime),
              endTime: seconds(d.endTime),
            },
          ];
        }),
      )
    : undefined;
  const stints = participants(all, end);
  const firstEventAt = Math.min(...all.map((f) => f.time));
  const initiatedAt = on || call ? (on?.initiatedAt ?? call?.sentAt ?? 0) * 1000 : undefined;
  // tables.md:78: `sessionTime`, the earliest of the facts' times, initiation, start, joins and recordings.
  const sessionTime = Math.min(
    ...[
      firstEventAt,
      initiatedAt,
      startedAt,
      ...Object.values(stints).map((s) => s.joinedAt as number),
      ...Object.values(recordings).map((r) => r.startTime * 1000),
    ].filter((t): t is number => t !== undefined),
  );
  const initiator = call ? (call.data.entities?.by?.entity.uid ?? call.sender) : undefined;
  const receiver = call ? (call.data.entities?.for?.entity.uid ?? call.receiver) : undefined;
  return {
    pk: appKey(appId, sessionId),
    appId,
    sessionId,
    kind,
    initiator,
    receiver,
    receiverType: call?.receiverType,
    conversationId: call?.conversationId,
    callType: call ? (on?.type ?? call.type) : undefined,
    initiatedAt,
    outcome: outcome ? OUTCOME_OF[outcome.event.trigger] : undefined,
    startedAt,
    endedAt,
    durationSeconds:
      endedAt !== undefined && startedAt !== undefined
        ? Math.max(0, Math.round((endedAt - startedAt) / 1000))
        : undefined,
    participants: stints,
    recordings,
    transcripts,
    firstEventAt,
    sessionTime,
    initiatorKey: initiator ? appKey(appId, initiator) : undefined,
    receiverKey: receiver ? appKey(appId, receiver) : undefined,
    timeBucket: monthBucket(appId, sessionTime),
    recordingShard: Object.keys(recordings).length ? shardKey(appId, sessionId, RECORDING_SHARDS) : undefined,
  };
}

/**
 * Every session's items. The end is "the latest end event — final" (tables.md:78); two different
 * end events in the same second are not made exact (design-and-limits.md:88-90): each of them may
 * then be the end, and the reference allows each.
 */
export function referenceSessions(facts: readonly Fact[]): Map<string, Item[]> {
  const bySession = new Map<string, Fact[]>();
  for (const f of facts) {
    if (!isSessionEvent(f.event)) continue;
    const id = sessionIdOf(f.event as SessionEvent);
    if (id === undefined) continue;
    const k = `${appKey(f.event.appId, id)}|`;
    bySession.set(k, [...(bySession.get(k) ?? []), f]);
  }
  const out = new Map<string, Item[]>();
  for (const [k, all] of bySession) {
    const appId = (all[0] as Fact).event.appId;
    const sessionId = k.slice(appId.length + 1, -1);
    const ends = all.filter((f) => ENDS.includes(f.event.trigger));
    const last = latest(ends);
    const tied = last ? ends.filter((f) => Math.floor(f.time / 1000) === Math.floor(last.time / 1000)) : [];
    out.set(
      k,
      (tied.length ? tied : [undefined]).map((end) => session(appId, sessionId, all, end)),
    );
  }
  return out;
}
