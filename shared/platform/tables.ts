/**
 * The projection tables, defined once: the CDK app creates them from this, and so does the local
 * stack. Every key includes the app id. All keys are strings but the sort keys of time indexes.
 */
export type AttributeType = "S" | "N";

export interface KeyAttribute {
  name: string;
  type: AttributeType;
}

export interface IndexDefinition {
  name: string;
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
}

export interface TableDefinition {
  /** Logical id: the CDK construct id and the local table name's suffix. */
  id: "Groups" | "Memberships" | "Presence" | "Sessions";
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  indexes: IndexDefinition[];
}

const S = (name: string): KeyAttribute => ({ name, type: "S" });
const N = (name: string): KeyAttribute => ({ name, type: "N" });

/** groups: pk `<appId>#<guid>`: a group's state. */
export const GROUPS_TABLE: TableDefinition = { id: "Groups", partitionKey: S("pk"), indexes: [] };

/**
 * memberships: pk `<appId>#<guid>`, sk `<uid>`: a group's members (Query on pk).
 * Index `byUser`: pk `<appId>#<uid>`, sk `<guid>`: the groups of a user.
 */
export const MEMBERSHIPS_TABLE: TableDefinition = {
  id: "Memberships",
  partitionKey: S("pk"),
  sortKey: S("uid"),
  indexes: [{ name: "byUser", partitionKey: S("userKey"), sortKey: S("guid") }],
};

/**
 * presence: pk `<appId>#<uid>`: a user's presence.
 * Sparse index `online`: pk `onlineApp` (= appId, present only while online), sk `uid`: who is online now.
 */
export const PRESENCE_TABLE: TableDefinition = {
  id: "Presence",
  partitionKey: S("pk"),
  indexes: [{ name: "online", partitionKey: S("onlineApp"), sortKey: S("uid") }],
};

/**
 * sessions: pk `<appId>#<sessionId>`: a call or meeting with participants and recordings.
 * Index `byTime`: pk `appId`, sk `sessionTime` (ms): the sessions in a time range.
 * Indexes `byInitiator` / `byReceiver`: pk `<appId>#<uid>`, sk `sessionTime`: the sessions of a user.
 * Sparse index `withRecording`: pk `recordingApp` (= appId once a recording is known), sk `sessionTime`.
 */
export const SESSIONS_TABLE: TableDefinition = {
  id: "Sessions",
  partitionKey: S("pk"),
  indexes: [
    { name: "byTime", partitionKey: S("appId"), sortKey: N("sessionTime") },
    { name: "byInitiator", partitionKey: S("initiatorKey"), sortKey: N("sessionTime") },
    { name: "byReceiver", partitionKey: S("receiverKey"), sortKey: N("sessionTime") },
    { name: "withRecording", partitionKey: S("recordingApp"), sortKey: N("sessionTime") },
  ],
};

export const TABLE_DEFINITIONS: readonly TableDefinition[] = [
  GROUPS_TABLE,
  MEMBERSHIPS_TABLE,
  PRESENCE_TABLE,
  SESSIONS_TABLE,
];

/** The deployed (or local) names of the four tables. */
export interface TableNames {
  groups: string;
  memberships: string;
  presence: string;
  sessions: string;
}

/** `<appId>#<id>`: every key is scoped by app. */
export function appKey(appId: string, id: string): string {
  return `${appId}#${id}`;
}
