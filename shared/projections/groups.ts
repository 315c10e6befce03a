import { type GroupEvent, isGroupEvent } from "../events/accessors";
import { appKey } from "../tables";
import type { Projection, ProjectionInput, SeenEvents } from "./types";
import { isNewer, type Version } from "./version";

/**
 * A group's current state (the `groups` table). Each part carries the version that wrote it:
 * - `info` (name, type, owner, membersCount, …): the latest event by event time, whatever its
 *   trigger: every group event carries the whole group as the platform saw it then;
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
  versions: { info: Version; transfer?: Version; deleted?: Version; created?: Version };
  seen?: SeenEvents;
}

function isDeleted(versions: GroupState["versions"]): boolean {
  return (
    versions.deleted !== undefined && (versions.created === undefined || versions.created < versions.deleted)
  );
}

/**
 * Applies one group event to a group.
 *
 * @example evolveGroup(null, { event: groupCreated, version, ... }) // { guid, name, deleted: false, ... }
 */
export function evolveGroup(state: GroupState | null, input: ProjectionInput<GroupEvent>): GroupState {
  const { event, version } = input;
  const group = event.data.group;
  let next: GroupState;
  if (state === null || isNewer(state.versions.info, version)) {
    next = {
      ...(state ?? { deleted: false }),
      pk: appKey(event.appId, group.guid),
      appId: event.appId,
      guid: group.guid,
      name: group.name,
      type: group.type,
      owner: group.owner,
      membersCount: group.membersCount,
      onlineMembersCount: group.onlineMembersCount,
      conversationId: group.conversationId,
      createdAt: group.createdAt,
      updatedAt: group.updatedAt,
      updatedBy: group.updatedBy,
      versions: { ...state?.versions, info: version },
    };
  } else {
    next = { ...state, versions: { ...state.versions } };
  }
  const { versions } = next;
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
  keys: ({ event }) => [{ pk: appKey(event.appId, event.data.group.guid) }],
  evolve: (state, input) => evolveGroup(state, input),
};
