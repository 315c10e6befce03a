import { detailedGroupOf, type GroupEvent, isGroupEvent, isMembershipEvent } from "../events/accessors.ts";
import { appKey } from "./keys.ts";
import type { Fallbacks, KnownFacts, Projection, ProjectionInput, SeenEvents } from "./types.ts";
import { isNewer, type Version } from "./version.ts";

/**
 * A group's current state (the `groups` table). Each part carries the version that wrote it:
 * - `info` (name, type, owner, conversationId, createdAt, updatedAt/By): the latest group event
 *   (created, updated, deleted, owner transferred) by event time. Membership events carry the
 *   group too, but no event time (their version is the edge's receipt time): they fill `info` only
 *   while no group event has, so a late membership delivery cannot revert a rename;
 * - `count` (membersCount, onlineMembersCount): the latest report of any group event;
 * - `transfer` (previousOwner): the latest `group_owner_transferred`;
 * - `deleted`: the latest `group_deleted`, a tombstone; only a `group_created` newer than it
 *   brings the group back (an older update, or a membership event, never does).
 */
export interface GroupState {
  pk: string;
  appId: string;
  guid: string;
  name: string;
  type: string;
  owner: string;
  membersCount: number;
  onlineMembersCount?: number;
  conversationId?: string;
  createdAt: number;
  updatedAt?: number;
  updatedBy?: string;
  previousOwner?: string;
  ownerTransferredAt?: number;
  deleted: boolean;
  deletedAt?: number;
  deletedBy?: string;
  versions: { info: string; count: Version; transfer?: Version; deleted?: Version; created?: Version };
  seen?: SeenEvents;
  /** Each part's runner-up while a platform retry may hold it (`Projection.parts`). */
  fallback?: Fallbacks;
  /** The facts it folded and keeps in no part, for twice W (`Projection.recallsFacts`). */
  known?: KnownFacts;
}

function isDeleted(versions: GroupState["versions"]): boolean {
  return versions.deleted !== undefined && isNewer(versions.created, versions.deleted);
}

/**
 * Applies one group event to a group.
 *
 * @example evolveGroup(null, { event: groupCreated, version, ... }) // { guid, name, deleted: false, ... }
 */
export function evolveGroup(state: GroupState | null, input: ProjectionInput<GroupEvent>): GroupState {
  const { event, version } = input;
  const group = detailedGroupOf(event);
  // A slim group (a membership event's) has no item to write: `keys` gives it none.
  if (!group) {
    if (state) return state;
    throw new Error(`${event.trigger}: a slim group has no item of its own (guid ${event.data.group.guid})`);
  }
  // Group events outrank membership events for `info`, whatever their times.
  const infoRank = `${isMembershipEvent(event) && event.trigger !== "group_created" ? 0 : 1}.${version}`;
  let next: GroupState;
  if (state === null || isNewer(state.versions.info, infoRank)) {
    next = {
      ...(state ?? { deleted: false, membersCount: group.membersCount }),
      pk: appKey(event.appId, group.guid),
      appId: event.appId,
      guid: group.guid,
      name: group.name,
      type: group.type,
      owner: group.owner,
      conversationId: group.conversationId,
      createdAt: group.createdAt,
      updatedAt: group.updatedAt,
      updatedBy: group.updatedBy,
      versions: { count: version, ...state?.versions, info: infoRank },
    };
  } else {
    next = { ...state, versions: { ...state.versions } };
  }
  const { versions } = next;
  if (state === null || isNewer(state.versions.count, version)) {
    next.membersCount = group.membersCount;
    next.onlineMembersCount = group.onlineMembersCount;
    versions.count = version;
  }
  if (event.trigger === "group_owner_transferred" && isNewer(versions.transfer, version)) {
    next.previousOwner = group.oldOwner;
    next.ownerTransferredAt = input.eventTimeMs;
    versions.transfer = version;
  }
  if (event.trigger === "group_deleted" && isNewer(versions.deleted, version)) {
    next.deletedAt = input.eventTimeMs;
    next.deletedBy = group.updatedBy;
    versions.deleted = version;
  }
  if (event.trigger === "group_created" && isNewer(versions.created, version)) versions.created = version;
  next.deleted = isDeleted(versions);
  if (!next.deleted) {
    next.deletedAt = undefined;
    next.deletedBy = undefined;
  }
  return next;
}

export const groupsProjection: Projection<GroupState, GroupEvent> = {
  name: "groups",
  handles: isGroupEvent,
  // A membership event whose group is slim (guid only) records the membership, not the group.
  keys: ({ event }) => (detailedGroupOf(event) ? [{ pk: appKey(event.appId, event.data.group.guid) }] : []),
  evolve: (state, input) => evolveGroup(state, input),
  // Group events without `updatedAt`, and membership events filling `info`, are receipt-timed.
  parts: {
    info: ["name", "type", "owner", "conversationId", "createdAt", "updatedAt", "updatedBy"],
    count: ["membersCount", "onlineMembersCount"],
    transfer: ["previousOwner", "ownerTransferredAt"],
    deleted: ["deletedAt", "deletedBy"],
    created: [],
  }, // Every fact-derived field is a part's: a retry of a fact no part keeps changes nothing.
  recallsFacts: true,
};
