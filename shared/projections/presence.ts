import type { EventOf, KnownEvent } from "../events/schemas";
import { appKey, ONLINE_SHARDS, shardKey } from "../platform/tables";
import type { Fallbacks, Projection, ProjectionInput, SeenEvents } from "./types";
import { isNewer, maxDefined, minDefined, type Version, versionTime } from "./version";

type PresenceEvent = EventOf<"user_connection_status_changed">;

/**
 * A user's presence (the `presence` table), from `user_connection_status_changed` (ms times).
 * - `status` part (status, platform, userAgent, appVersion, connection): the latest event;
 * - name, avatar, role, lastActiveAt: each the newest event that carried it (a payload may omit
 *   them: the spec marks avatar and lastActiveAt optional), each a part of its own;
 * - `change` part (since): the latest event that changed the user's presence
 *   (`userPresenceChanged` not false);
 * - lastSeen / firstSeen: the latest / earliest event time of any connection event (max and min
 *   need no version). `since` is the change part's time, or firstSeen when no event changed it.
 * `onlineShard` is set only while online: it feeds the sparse, sharded `online` index.
 */
export interface PresenceState {
  pk: string;
  appId: string;
  uid: string;
  name?: string;
  /** The user's profile as the latest event (or platform listing) gave it. */
  avatar?: string;
  role?: string;
  /** Epoch seconds, as the platform reports it. */
  lastActiveAt?: number;
  status: string;
  since: number;
  firstSeen: number;
  lastSeen: number;
  platform: string;
  connection: string;
  userAgent?: string;
  appVersion?: string;
  onlineShard?: string;
  /** Per part; `name`, `avatar`, `role`, `lastActiveAt` only where not the status's (`fieldParts`). */
  versions: {
    status: Version;
    change?: Version;
    name?: Version;
    avatar?: Version;
    role?: Version;
    lastActiveAt?: Version;
  };
  seen?: SeenEvents;
  /** Each part's runner-ups (`Projection.parts`). */
  fallback?: Fallbacks;
}

/** The user's profile fields: each a payload may omit, each kept from the newest fact that carried it. */
const PROFILE_FIELDS = ["name", "avatar", "role", "lastActiveAt"] as const;

/**
 * Applies one presence event.
 *
 * @example evolvePresence(null, connectedInput).onlineShard // "app1#11"
 */
export function evolvePresence(
  state: PresenceState | null,
  input: ProjectionInput<PresenceEvent>,
): PresenceState {
  const { event, version, eventTimeMs } = input;
  const { data } = event;
  const changes = data.userPresenceChanged !== false;
  const latest = state === null || isNewer(state.versions.status, version);
  const next: PresenceState = latest
    ? {
        ...(state ?? {}),
        pk: appKey(event.appId, data.user.uid),
        appId: event.appId,
        uid: data.user.uid,
        status: data.status,
        since: eventTimeMs,
        firstSeen: eventTimeMs,
        lastSeen: eventTimeMs,
        platform: data.currentConnection.platform,
        connection: data.currentConnection.action,
        userAgent: data.currentConnection.userAgent,
        appVersion: data.currentConnection.appInfo?.version,
        versions: { ...state?.versions, status: version },
      }
    : { ...state, versions: { ...state.versions } };
  // A profile field a payload may omit is the value of the newest fact that carried it.
  for (const field of PROFILE_FIELDS) {
    const value = data.user[field];
    if (value !== undefined && isNewer(next.versions[field], version)) {
      Object.assign(next, { [field]: value });
      next.versions[field] = version;
    }
  }
  next.lastSeen = maxDefined(state?.lastSeen, eventTimeMs) ?? eventTimeMs;
  next.firstSeen = minDefined(state?.firstSeen, eventTimeMs) ?? eventTimeMs;
  if (changes && isNewer(next.versions.change, version)) next.versions.change = version;
  next.since = next.versions.change === undefined ? next.firstSeen : versionTime(next.versions.change);
  next.onlineShard = next.status === "online" ? shardKey(next.appId, next.uid, ONLINE_SHARDS) : undefined;
  return next;
}

export const presenceProjection: Projection<PresenceState, PresenceEvent> = {
  name: "presence",
  handles: (event: KnownEvent): event is PresenceEvent => event.trigger === "user_connection_status_changed",
  keys: ({ event }) => [{ pk: appKey(event.appId, event.data.user.uid) }],
  evolve: (state, input) => evolvePresence(state, input),
  // Payload-timed (ms): a platform retry matters only against a fact of the same ms and rank.
  parts: {
    status: ["status", "platform", "connection", "userAgent", "appVersion"],
    change: [],
    name: ["name"],
    avatar: ["avatar"],
    role: ["role"],
    lastActiveAt: ["lastActiveAt"],
  },
  fieldParts: { name: "status", avatar: "status", role: "status", lastActiveAt: "status" },
};
