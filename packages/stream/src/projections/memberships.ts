import {
  actorOf,
  isMembershipEvent,
  type MembershipEvent,
  type MembershipTrigger,
} from "../events/accessors.ts";
import { appKey } from "./keys.ts";
import type { Fallbacks, ItemKey, KnownFacts, Projection, ProjectionInput, SeenEvents } from "./types.ts";
import { isNewer, type Version } from "./version.ts";

export type MembershipStatus = "member" | "left" | "kicked" | "banned" | "unbanned";

/**
 * One (group, user) pair (the `memberships` table). Parts and their versions:
 * - `status` (status, by, statusAt): the latest membership event for this user. A leave,
 *   kick or ban is a tombstone: an older join arriving later cannot bring the member back.
 * - `joined` (joinedAt): the latest event that made the user a member.
 * - `scope`: the latest of a scope change, or of a join/add (which resets it to participant);
 * - `name`: the latest event that carried the member's name (a payload may omit it).
 * Membership events carry no event time: their version is the edge's receipt time.
 */
export interface MembershipState {
  pk: string;
  uid: string;
  appId: string;
  guid: string;
  userKey: string;
  name?: string;
  status?: MembershipStatus;
  statusAt?: number;
  by?: string;
  scope?: string;
  joinedAt?: number;
  /** Per part; `name` only where it is not the status's (`fieldParts`). */
  versions: { status?: Version; joined?: Version; scope?: Version; name?: Version };
  seen?: SeenEvents;
  /** Each part's runner-up while a platform retry may hold it (`Projection.parts`). */
  fallback?: Fallbacks;
  /** The facts it folded and keeps in no part, for twice W (`Projection.recallsFacts`). */
  known?: KnownFacts;
}

const STATUS_OF: Record<Exclude<MembershipTrigger, "group_member_scope_changed">, MembershipStatus> = {
  group_created: "member",
  group_member_joined: "member",
  group_member_added: "member",
  group_member_left: "left",
  group_member_kicked: "kicked",
  group_member_banned: "banned",
  group_member_unbanned: "unbanned",
};

/** The scope a member starts with when the platform does not say. */
export const DEFAULT_SCOPE = "participant";

/**
 * Applies one membership event to one member's item (`uid` is the member's).
 *
 * @example evolveMembership(null, kickedInput, "u2").status // "kicked"
 */
export function evolveMembership(
  state: MembershipState | null,
  input: ProjectionInput<MembershipEvent>,
  uid: string,
): MembershipState {
  const { event, version } = input;
  const guid = event.data.group.guid;
  const member = event.data.members[uid];
  const next: MembershipState = {
    ...(state ?? {}),
    pk: appKey(event.appId, guid),
    uid,
    appId: event.appId,
    guid,
    userKey: appKey(event.appId, uid),
    versions: { ...state?.versions },
  };
  const { versions } = next;
  // The member's name, which a payload may omit: the newest fact that carried it.
  if (member?.name !== undefined && isNewer(versions.name, version)) {
    next.name = member.name;
    versions.name = version;
  }

  if (event.trigger === "group_member_scope_changed") {
    const scope = event.data.members[uid]?.scope;
    if (scope !== undefined && isNewer(versions.scope, version)) {
      next.scope = scope;
      versions.scope = version;
    }
    return next;
  }

  const status = STATUS_OF[event.trigger];
  if (isNewer(versions.status, version)) {
    next.status = status;
    next.statusAt = input.eventTimeMs;
    next.by = actorOf(event);
    versions.status = version;
  }
  if (status === "member") {
    if (isNewer(versions.joined, version)) {
      next.joinedAt =
        event.trigger === "group_created" && event.data.group.joinedAt !== undefined
          ? event.data.group.joinedAt * 1000
          : input.eventTimeMs;
      versions.joined = version;
    }
    if (isNewer(versions.scope, version)) {
      // group_created's group.scope is the creator's (the only member of that event).
      next.scope = event.trigger === "group_created" ? (event.data.group.scope ?? "admin") : DEFAULT_SCOPE;
      versions.scope = version;
    }
  }
  return next;
}

export const membershipsProjection: Projection<MembershipState, MembershipEvent> = {
  name: "memberships",
  handles: isMembershipEvent,
  keys: ({ event }): ItemKey[] =>
    Object.keys(event.data.members).map((uid) => ({
      pk: appKey(event.appId, event.data.group.guid),
      sk: uid,
    })),
  evolve: (state, input, key) => evolveMembership(state, input, key.sk ?? ""),
  parts: { status: ["status", "statusAt", "by"], joined: ["joinedAt"], scope: ["scope"], name: ["name"] },
  fieldParts: { name: "status" }, // Every fact-derived field is a part's: a retry of a fact no part keeps changes nothing.
  recallsFacts: true,
};
