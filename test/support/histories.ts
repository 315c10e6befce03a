import { createHash } from "node:crypto";
import fc from "fast-check";
import { fixture, type Loose } from "./fixtures";

/** One delivery of a generated history: the body and the time the edge stamped on it. */
export interface Delivery {
  body: string;
  receivedAt: number;
  eventId: string;
}

type Op =
  | { kind: "group"; action: "update" | "transfer" }
  | {
      kind: "member";
      action: "added" | "joined" | "left" | "kicked" | "banned" | "unbanned" | "scope";
      user: number;
    }
  | { kind: "presence"; user: number; online: boolean; changed: boolean; platform: number }
  | { kind: "participant"; session: number; name: number; action: "join" | "leave" }
  | { kind: "session"; session: number; action: "initiate" | "start" | "end" | "record" | "busy" };

const USERS = ["u1", "u2", "u3", "u4"];
const NAMES = ["Andrew Joseph", "George Alan", "Susan Marie"];
const PLATFORMS = ["web", "android", "ios"];

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("group" as const),
    action: fc.constantFrom("update" as const, "transfer" as const),
  }),
  fc.record({
    kind: fc.constant("member" as const),
    action: fc.constantFrom(
      "added" as const,
      "joined" as const,
      "left" as const,
      "kicked" as const,
      "banned" as const,
      "unbanned" as const,
      "scope" as const,
    ),
    user: fc.nat({ max: USERS.length - 1 }),
  }),
  fc.record({
    kind: fc.constant("presence" as const),
    user: fc.nat({ max: USERS.length - 1 }),
    online: fc.boolean(),
    changed: fc.boolean(),
    platform: fc.nat({ max: PLATFORMS.length - 1 }),
  }),
  fc.record({
    kind: fc.constant("participant" as const),
    session: fc.nat({ max: 1 }),
    name: fc.nat({ max: NAMES.length - 1 }),
    action: fc.constantFrom("join" as const, "leave" as const),
  }),
  fc.record({
    kind: fc.constant("session" as const),
    session: fc.nat({ max: 1 }),
    action: fc.constantFrom(
      "initiate" as const,
      "start" as const,
      "end" as const,
      "record" as const,
      "busy" as const,
    ),
  }),
);

export interface History {
  appId: string;
  deliveries: Delivery[];
  /** What the history implies, for the access-pattern assertions. */
  expected: {
    guid: string;
    deleted: boolean;
    members: Map<string, string>;
    online: Set<string>;
    sessionIds: string[];
  };
}

function delivery(json: Loose, receivedAt: number): Delivery {
  const body = JSON.stringify(json);
  return { body, receivedAt, eventId: createHash("sha256").update(body).digest("hex") };
}

/**
 * Builds a coherent history from a list of operations: one group (created first, maybe deleted
 * last), four users' presence, two sessions. Times advance 1-3 s per event; the edge receives
 * each event a few hundred ms after it happened, in order.
 */
export function buildHistory(appId: string, ops: Op[], gaps: number[], deleteAtEnd: boolean): History {
  const guid = "g1";
  let t = 1_700_000_000;
  const deliveries: Delivery[] = [];
  const members = new Map<string, string>();
  const online = new Set<string>();
  const sessionIds = ["s-a", "s-b"].map((s) => `${appId}-${s}`);
  const joinedAt = new Map<string, number>();
  let owner = "u1";
  let name = "Hiking";
  let membersCount = 1;
  const emit = (json: Loose) =>
    deliveries.push(delivery(json, t * 1000 + 300 + (deliveries.length % 7) * 50));
  const group = (extra: Loose = {}) => ({
    guid,
    name,
    type: "public",
    membersCount,
    conversationId: `group_${guid}`,
    createdAt: 1_700_000_000,
    owner,
    ...extra,
  });
  // lastActiveAt moves with time, as on the platform: two events never have the same bytes.
  const user = (uid: string) => ({
    uid,
    name: `User ${uid}`,
    status: "available",
    role: "default",
    lastActiveAt: t,
  });

  const created = fixture("group_created");
  created.appId = appId;
  created.data.group = { ...group(), scope: "admin", joinedAt: t, hasJoined: true };
  created.data.members = { u1: user("u1") };
  members.set("u1", "admin");
  emit(created);

  ops.forEach((op, i) => {
    t += gaps[i % gaps.length] ?? 1;
    if (op.kind === "group") {
      const e = fixture(op.action === "update" ? "group_updated" : "group_owner_transferred");
      e.appId = appId;
      if (op.action === "update") name = `Hiking ${i}`;
      const oldOwner = owner;
      if (op.action === "transfer") owner = owner === "u1" ? "u2" : "u1";
      e.data.group = group({
        updatedAt: t,
        updatedBy: oldOwner,
        ...(op.action === "transfer" ? { oldOwner } : {}),
      });
      emit(e);
    } else if (op.kind === "member") {
      const uid = USERS[op.user] as string;
      const trigger = {
        added: "group_member_added",
        joined: "group_member_joined",
        left: "group_member_left",
        kicked: "group_member_kicked",
        banned: "group_member_banned",
        unbanned: "group_member_unbanned",
        scope: "group_member_scope_changed",
      }[op.action];
      const e = fixture(trigger);
      e.appId = appId;
      if (op.action === "added" || op.action === "joined") {
        if (!members.has(uid)) membersCount++;
        members.set(uid, "participant");
      } else if (op.action === "scope") {
        if (members.has(uid)) members.set(uid, "admin");
      } else if (members.delete(uid)) membersCount--;
      e.data.group = group();
      const m: Loose = user(uid);
      if (op.action === "scope") {
        m.scope = "admin";
        m.oldScope = "participant";
      }
      e.data.members = { [uid]: m };
      if ("by" in e.data) e.data.by = user(owner);
      // A scope change of a non-member is not something the platform sends.
      if (op.action === "scope" && !members.has(uid)) return;
      emit(e);
    } else if (op.kind === "presence") {
      const uid = USERS[op.user] as string;
      const e = fixture("user_connection_status_changed");
      e.appId = appId;
      const ms = t * 1000 + 123;
      e.data.timestamp = ms;
      e.data.status = op.online ? "online" : "offline";
      e.data.user = { ...user(uid), status: e.data.status };
      e.data.userPresenceChanged = op.changed;
      e.data.currentConnection = {
        action: op.online ? "connected" : "disconnected",
        platform: PLATFORMS[op.platform],
        connectedAt: ms - 1000,
      };
      if (op.online) online.add(uid);
      else online.delete(uid);
      emit(e);
    } else if (op.kind === "participant") {
      const sessionId = sessionIds[op.session] as string;
      const who = NAMES[op.name] as string;
      const key = `${sessionId}|${who}`;
      const e = fixture(op.action === "join" ? "call_participant_joined" : "call_participant_left");
      e.appId = appId;
      e.data.sessionId = sessionId;
      if (op.action === "join") {
        joinedAt.set(key, t);
        e.data.occupant = { joined_at: t, audio_call: "true", name: who };
      } else {
        const since = joinedAt.get(key);
        if (since === undefined) return;
        e.data.occupant = { joined_at: since, left_at: t, audio_call: "true", name: who };
        joinedAt.delete(key);
      }
      emit(e);
    } else {
      const sessionId = sessionIds[op.session] as string;
      const e = fixture(
        {
          initiate: "call_initiated",
          start: "call_started",
          end: "call_ended",
          record: "recording_generated",
          busy: "call_busy",
        }[op.action],
      );
      e.appId = appId;
      if (op.action === "initiate" || op.action === "busy") {
        e.data.call.sentAt = t;
        e.data.call.updatedAt = t;
        e.data.call.data.entities.on.entity.sessionid = sessionId;
        e.data.call.data.entities.on.entity.initiatedAt = t;
      } else if (op.action === "start") {
        e.data.sessionId = sessionId;
        e.data.created_at = t;
      } else if (op.action === "end") {
        e.data.sessionId = sessionId;
        e.data.created_at = t - 60;
        e.data.destroyed_at = t;
        e.data.all_occupants = NAMES.slice(0, 2).map((n, k) => ({
          joined_at: t - 50 + k,
          left_at: t,
          audio_call: "true",
          name: n,
        }));
      } else {
        e.data.sessionId = sessionId;
        e.data.startTime = String(t - 30);
        e.data.duration = "30.5";
        e.data.recordingDate = new Date((t - 30) * 1000).toISOString().slice(0, 10);
        e.data.recording_url = `https://files.example.com/${sessionId}.mp4?sig=${i}`;
      }
      emit(e);
    }
  });

  if (deleteAtEnd) {
    t += 2;
    const e = fixture("group_deleted");
    e.appId = appId;
    e.data.group = group({ updatedAt: t, updatedBy: owner });
    emit(e);
  }
  return { appId, deliveries, expected: { guid, deleted: deleteAtEnd, members, online, sessionIds } };
}

/** A history and, for the same events, a shuffled delivery order with duplicates. */
export const historyArbitrary = (appId: fc.Arbitrary<string>, maxOps = 30) =>
  fc
    .record({
      appId,
      ops: fc.array(opArbitrary, { minLength: 5, maxLength: maxOps }),
      gaps: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 5 }),
      deleteAtEnd: fc.boolean(),
    })
    .map(({ appId, ops, gaps, deleteAtEnd }) => buildHistory(appId, ops, gaps, deleteAtEnd))
    .chain((history) => fc.subarray(history.deliveries).map((duplicates) => ({ history, duplicates })))
    .chain(({ history, duplicates }) =>
      fc
        .shuffledSubarray([...history.deliveries, ...duplicates], {
          minLength: history.deliveries.length + duplicates.length,
        })
        .map((shuffled) => ({ history, shuffled })),
    );
