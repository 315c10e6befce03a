/**
 * The day sets' objects as bytes: each kind's gzipped NDJSON lines written (`encode…`) and read
 * back (`decode…`), every app's entries in one object, apps in order.
 */
import { gzipSync } from "node:zlib";
import { objectText } from "../../contracts/bucket-layout";
import type { ActiveUser, GroupDeletion, MemberChange } from "../figures";

/** Every app's users of a day: app → its users by uid, with when their entity says they were created. */
export type DayUsers = Map<string, ActiveUser[]>;

const gzipLines = (lines: readonly string[]) => gzipSync(lines.length ? `${lines.join("\n")}\n` : "");

/** Every app's membership changes of a day (`MemberChange`, `GroupDeletion`). */
export type DayMembers = Map<string, { members: MemberChange[]; deletions: GroupDeletion[] }>;

/** The lines of a membership-history object. */
export function encodeMembers(members: DayMembers): Uint8Array {
  return gzipLines(
    [...members.keys()].sort().flatMap((app) => {
      const { members: changes = [], deletions = [] } = members.get(app) ?? {};
      return [
        ...changes.map((c) => JSON.stringify({ app, ...c })),
        ...deletions.map((d) => JSON.stringify({ app, group: d.group, deleted: d.at })),
      ];
    }),
  );
}

/** A membership-history object's changes and deletions, per app. */
export function decodeMembers(bytes: Uint8Array): DayMembers {
  const out: DayMembers = new Map();
  for (const line of objectText(bytes).split("\n")) {
    if (!line.trim()) continue;
    const { app, deleted, ...change } = JSON.parse(line) as MemberChange & { app: string; deleted?: string };
    const entry = out.get(app) ?? { members: [], deletions: [] };
    if (deleted !== undefined) entry.deletions.push({ group: change.group, at: deleted });
    else entry.members.push(change);
    out.set(app, entry);
  }
  return out;
}

/** The lines of a set object: `{"app","uid"}`, and `"createdAt"` (epoch s) when a fact gave it. */
export function encodeUsers(users: DayUsers): Uint8Array {
  return gzipLines(
    [...users.keys()]
      .sort()
      .flatMap((app) => (users.get(app) ?? []).map((u) => JSON.stringify({ app, ...u }))),
  );
}

const byUid = (a: ActiveUser, b: ActiveUser) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);

/** A set object's users. */
export function decodeUsers(bytes: Uint8Array): DayUsers {
  const users: DayUsers = new Map();
  for (const line of objectText(bytes).split("\n")) {
    if (!line.trim()) continue;
    const { app, uid, createdAt } = JSON.parse(line) as { app: string; uid: string; createdAt?: number };
    users.set(app, [...(users.get(app) ?? []), { uid, ...(createdAt === undefined ? {} : { createdAt }) }]);
  }
  for (const list of users.values()) list.sort(byUid);
  return users;
}

/** Every app's conversations of a day that had a message (conversation ids). */
export type DayConversations = Map<string, string[]>;

/** The lines of a conversations object: `{"app","conversation"}`. */
export function encodeConversations(conversations: DayConversations): Uint8Array {
  return gzipLines(
    [...conversations.keys()]
      .sort()
      .flatMap((app) =>
        (conversations.get(app) ?? []).map((conversation) => JSON.stringify({ app, conversation })),
      ),
  );
}

/** A conversations object's ids, per app. */
export function decodeConversations(bytes: Uint8Array): DayConversations {
  const out: DayConversations = new Map();
  for (const line of objectText(bytes).split("\n")) {
    if (!line.trim()) continue;
    const { app, conversation } = JSON.parse(line) as { app: string; conversation: string };
    out.set(app, [...(out.get(app) ?? []), conversation]);
  }
  for (const list of out.values()) list.sort();
  return out;
}
