import {
  actorOf,
  detailedGroupOf,
  isGroupEvent,
  isMembershipEvent,
  type MembershipEvent,
} from "@webhook-backend/stream/events/accessors";
import type { EventOf } from "@webhook-backend/stream/events/schemas";
import { appKey, ONLINE_SHARDS, shardKey } from "@webhook-backend/stream/projections/keys";
import { compareFacts, type Fact, latest } from "./facts";
import { referenceSessions } from "./sessions";

/*
 * The reference tables (#57): each table's fact-derived fields computed from the whole set of facts
 * about an item, by the rules docs/tables.md states (each cited), never by folding. An item is a
 * plain object of the fields the table documents (no `versions`, no bookkeeping).
 */

export type Item = Record<string, unknown>;
/** Per table, per item id (`pk|sk`), the items the documents allow (more than one only where they allow a set). */
export type ReferenceTables = Record<"groups" | "memberships" | "presence" | "sessions", Map<string, Item[]>>;

/**
 * A presence fact reconcile observed (docs/operating.md, reconcile.ts: "a status change event stamped
 * with the fetch time", `timestamp` = fetch time, received then, with the listing's profile fields).
 */
export interface ReconcileFact {
  appId: string;
  uid: string;
  status: "online" | "offline";
  listed: { name?: string; avatar?: string; role?: string; lastActiveAt?: number };
  fetchedAt: number;
  eventId: string;
}

/** Facts grouped by the item they touch. */
function byItem<F>(facts: readonly F[], keysOf: (f: F) => string[]): Map<string, F[]> {
  const out = new Map<string, F[]>();
  for (const f of facts) for (const k of keysOf(f)) out.set(k, [...(out.get(k) ?? []), f]);
  return out;
}

/** A group's facts: every group event whose payload has the group's details (tables.md:11, :75). */
function groups(facts: readonly Fact[]): Map<string, Item[]> {
  const touching = byItem(
    facts.filter((f) => isGroupEvent(f.event) && detailedGroupOf(f.event) !== undefined),
    (f) => [`${appKey(f.event.appId, (f.event as EventOf<"group_created">).data.group.guid)}|`],
  );
  const out = new Map<string, Item[]>();
  for (const [id, all] of touching) {
    const group = (f: Fact) => (f.event as EventOf<"group_updated">).data.group;
    // tables.md:75: `info` is the latest group event; membership events fill it only while no group
    // event has (group_created is a group event that also makes a member).
    const groupEvents = all.filter((f) => !isMembershipEvent(f.event) || f.event.trigger === "group_created");
    const info = latest(groupEvents.length ? groupEvents : all) as Fact;
    // tables.md:75: `count` is the latest report of any event carrying the group.
    const count = latest(all) as Fact;
    const transfer = latest(all.filter((f) => f.event.trigger === "group_owner_transferred"));
    const deleted = latest(all.filter((f) => f.event.trigger === "group_deleted"));
    const created = latest(all.filter((f) => f.event.trigger === "group_created"));
    // tables.md:75: deleted by the latest group_deleted; only a newer group_created clears it.
    const isDeleted = deleted !== undefined && !(created && compareFacts(created, deleted) > 0);
    const g = group(info);
    out.set(id, [
      {
        pk: appKey(info.event.appId, g.guid),
        appId: info.event.appId,
        guid: g.guid,
        // tables.md:75: every field of a part, optional ones included, is its holder's.
        name: g.name,
        type: g.type,
        owner: g.owner,
        conversationId: g.conversationId,
        createdAt: g.createdAt,
        updatedAt: g.updatedAt,
        updatedBy: g.updatedBy,
        membersCount: group(count).membersCount,
        onlineMembersCount: group(count).onlineMembersCount,
        previousOwner: transfer
          ? (transfer.event as EventOf<"group_owner_transferred">).data.group.oldOwner
          : undefined,
        ownerTransferredAt: transfer?.time,
        deleted: isDeleted,
        deletedAt: isDeleted ? deleted?.time : undefined,
        deletedBy: isDeleted && deleted ? group(deleted).updatedBy : undefined,
      },
    ]);
  }
  return out;
}

const STATUS_OF: Record<string, string> = {
  group_created: "member",
  group_member_joined: "member",
  group_member_added: "member",
  group_member_left: "left",
  group_member_kicked: "kicked",
  group_member_banned: "banned",
  group_member_unbanned: "unbanned",
};

/** One (group, member) pair per member a membership event names (tables.md:12, :76). */
function memberships(facts: readonly Fact[], erased: ReadonlySet<string>): Map<string, Item[]> {
  const membership = facts.filter((f) => isMembershipEvent(f.event));
  const pairs = new Map<string, { uid: string; facts: Fact[] }>();
  for (const f of membership) {
    const e = f.event as MembershipEvent;
    for (const uid of Object.keys(e.data.members)) {
      const id = `${appKey(e.appId, e.data.group.guid)}|${uid}`;
      const pair = pairs.get(id) ?? { uid, facts: [] };
      pair.facts.push(f);
      pairs.set(id, pair);
    }
  }
  const out = new Map<string, Item[]>();
  for (const [id, { uid, facts: all }] of pairs) {
    // docs/personal-data.md:284-286: no membership of a pseudonym is written.
    if (erased.has(uid)) continue;
    const ev = (f: Fact) => f.event as MembershipEvent;
    const member = (f: Fact) => ev(f).data.members[uid];
    // tables.md:76: status (status, by, statusAt) is the latest membership event for the pair
    // (a scope change changes no status).
    const status = latest(all.filter((f) => f.event.trigger !== "group_member_scope_changed"));
    // joinedAt: the latest event that made the user a member.
    const joined = latest(all.filter((f) => STATUS_OF[f.event.trigger] === "member"));
    // scope: the latest scope change, or join/add (which resets it to participant; group_created's
    // scope is the creator's, admin unless it says).
    const scope = latest(
      all.filter(
        (f) =>
          STATUS_OF[f.event.trigger] === "member" ||
          (f.event.trigger === "group_member_scope_changed" && member(f)?.scope !== undefined),
      ),
    );
    // name: the latest event that carried the member's name.
    const named = latest(all.filter((f) => member(f)?.name !== undefined));
    const e = ev(all[0] as Fact);
    const created = (f: Fact) => f.event as EventOf<"group_created">;
    out.set(id, [
      {
        pk: appKey(e.appId, e.data.group.guid),
        uid,
        appId: e.appId,
        guid: e.data.group.guid,
        userKey: appKey(e.appId, uid),
        name: named ? member(named)?.name : undefined,
        status: status ? STATUS_OF[status.event.trigger] : undefined,
        statusAt: status?.time,
        by: status ? actorOf(status.event) : undefined,
        scope: scope
          ? scope.event.trigger === "group_member_scope_changed"
            ? member(scope)?.scope
            : scope.event.trigger === "group_created"
              ? (created(scope).data.group.scope ?? "admin")
              : "participant"
          : undefined,
        joinedAt: joined
          ? joined.event.trigger === "group_created" && created(joined).data.group.joinedAt !== undefined
            ? (created(joined).data.group.joinedAt as number) * 1000
            : joined.time
          : undefined,
      },
    ]);
  }
  return out;
}

type PresenceFact = { fact: Fact; data: EventOf<"user_connection_status_changed">["data"] };
const PROFILE = ["name", "avatar", "role", "lastActiveAt"] as const;

/** A user's presence (tables.md:13, :77), from connection events and reconcile's facts. */
function presence(
  facts: readonly Fact[],
  reconciled: readonly ReconcileFact[],
  erased: ReadonlySet<string>,
): Map<string, Item[]> {
  const webhook: PresenceFact[] = facts
    .filter((f) => f.event.trigger === "user_connection_status_changed")
    .map((f) => ({ fact: f, data: (f.event as EventOf<"user_connection_status_changed">).data }));
  const touching = byItem<PresenceFact | ReconcileFact>([...webhook, ...reconciled], (f) =>
    "fact" in f ? [`${appKey(f.fact.event.appId, f.data.user.uid)}|`] : [`${appKey(f.appId, f.uid)}|`],
  );
  const out = new Map<string, Item[]>();
  for (const [id, all] of touching) {
    const hooks = all.filter((f): f is PresenceFact => "fact" in f);
    const uid = id.slice(id.indexOf("#") + 1, -1);
    const appId = id.slice(0, id.indexOf("#"));
    // docs/personal-data.md:284-286: no presence of a pseudonym is written.
    if (erased.has(uid)) continue;
    // A reconcile fact is a status change at the fetch time (rank 1, received then), made of the
    // listing alone: platform `unknown`, no agent or app version, no change of `since`
    // (docs/operating.md, "Catching up with the platform").
    const entries: PresenceFact[] = [
      ...hooks,
      ...all
        .filter((f): f is ReconcileFact => !("fact" in f))
        .map((r) => ({
          fact: {
            event: { trigger: "user_connection_status_changed" } as Fact["event"],
            eventId: r.eventId,
            receipt: r.fetchedAt,
            time: r.fetchedAt,
            rank: 1 as const,
          },
          data: {
            timestamp: r.fetchedAt,
            status: r.status,
            user: { uid, status: r.status, ...r.listed },
            currentConnection: { action: "reconciled", platform: "unknown" },
            userPresenceChanged: false,
          } as PresenceFact["data"],
        })),
    ];
    // tables.md:77: status, platform, user agent, app version: the latest event by its ms timestamp.
    const status = latestOf(entries) as PresenceFact;
    // tables.md:77: `since`, the latest event that changed presence, else the first seen.
    const change = latestOf(entries.filter((e) => e.data.userPresenceChanged !== false));
    const times = entries.map((e) => e.fact.time);
    const item: Item = {
      pk: appKey(appId, uid),
      appId,
      uid,
      status: status.data.status,
      platform: status.data.currentConnection.platform,
      connection: status.data.currentConnection.action,
      userAgent: status.data.currentConnection.userAgent,
      appVersion: status.data.currentConnection.appInfo?.version,
      // tables.md:77: `lastSeen` the maximum event time, `firstSeen` the minimum.
      lastSeen: Math.max(...times),
      firstSeen: Math.min(...times),
      since: change ? change.fact.time : Math.min(...times),
      // tables.md:13: the sparse `online` index, by the uid's hash, only while online.
      onlineShard: status.data.status === "online" ? shardKey(appId, uid, ONLINE_SHARDS) : undefined,
    };
    // name, avatar, role, lastActiveAt: each the latest event that carried it (tables.md:77).
    for (const field of PROFILE) {
      const carrier = latestOf(entries.filter((e) => e.data.user[field] !== undefined));
      item[field] = carrier?.data.user[field];
    }
    out.set(id, [item]);
  }
  return out;
}

function latestOf(entries: readonly PresenceFact[]): PresenceFact | undefined {
  const top = latest(entries.map((e) => e.fact));
  return entries.find((e) => e.fact === top);
}

/**
 * The four tables the documents allow for one counting of the facts (`countings`), with reconcile's
 * facts and the pseudonyms whose own items are not written.
 */
export function referenceTables(
  facts: readonly Fact[],
  reconciled: readonly ReconcileFact[] = [],
  erased: readonly string[] = [],
): ReferenceTables {
  const gone = new Set(erased);
  return {
    groups: groups(facts),
    memberships: memberships(facts, gone),
    presence: presence(facts, reconciled, gone),
    sessions: referenceSessions(facts),
  };
}
