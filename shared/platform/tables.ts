import {
  appKey,
  monthBucket,
  ONLINE_SHARDS,
  PROJECTION_TABLE_NAMES,
  type ProjectionTableName,
  RECORDING_SHARDS,
  TABLE_KEYS,
} from "@webhook-backend/stream/projections/keys";
import { DYNAMO_PARTITION_KEY_MAX_BYTES, DYNAMO_SORT_KEY_MAX_BYTES } from "./constants";

/**
 * The projection tables, declared once (`PROJECTION_TABLES`): the projector, its stores, `trace`,
 * the dry run, the local stack's provisioning, the CDK app and the CLIs iterate them. Every key
 * includes the app id. All keys are strings but the sort keys of time indexes.
 *
 * Adding a table: one entry in `PROJECTION_TABLES` (its keys and indexes) and its projection in
 * `shared/projector/registry.ts` (docs/adding-a-table.md).
 */
export type AttributeType = "S" | "N";

export interface KeyAttribute {
  readonly name: string;
  readonly type: AttributeType;
}

/**
 * Every index projects its keys only: a write that changes no key attribute writes no index copy
 * (an index that projected ALL attributes was rewritten on every write of its items). A query
 * reads the keys from the index and the items from the table (BatchGetItem).
 */
export interface IndexDefinition {
  readonly name: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
}

export interface TableDefinition {
  /**
   * Logical id: the CDK construct id (so the table's CloudFormation logical id: renaming it would
   * replace a deployed table) and the stem of its stack output (`<id>Table`).
   */
  readonly id: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  readonly indexes: readonly IndexDefinition[];
}

const S = (name: string): KeyAttribute => ({ name, type: "S" });
const N = (name: string): KeyAttribute => ({ name, type: "N" });

/**
 * The projection tables by name (the stream package names them, `PROJECTION_TABLE_NAMES`: the
 * projections compute their keys). A table's name is the key of `TableNames`, the local table's
 * suffix (`<prefix>-<name>`), and, upper-cased, the functions' environment variable that holds
 * its deployed name (`tableEnvVar`: `GROUPS_TABLE`). Its id names it in CloudFormation. Neither
 * may change for a deployed stack.
 */
export const PROJECTION_TABLES = {
  /** groups: pk `<appId>#<guid>`: a group's state. */
  groups: { id: "Groups", partitionKey: S(TABLE_KEYS.groups.partitionKey), indexes: [] },
  /**
   * memberships: pk `<appId>#<guid>`, sk `<uid>`: a group's members (Query on pk).
   * Index `byUser`: pk `<appId>#<uid>`, sk `<guid>`: the groups of a user.
   */
  memberships: {
    id: "Memberships",
    partitionKey: S(TABLE_KEYS.memberships.partitionKey),
    sortKey: S(TABLE_KEYS.memberships.sortKey),
    indexes: [{ name: "byUser", partitionKey: S("userKey"), sortKey: S("guid") }],
  },
  /**
   * presence: pk `<appId>#<uid>`: a user's presence.
   * Sparse index `online`: pk `onlineShard` (`<appId>#<0..ONLINE_SHARDS-1>`, by the uid's hash;
   * present only while online), sk `uid`: who is online now, one query per shard. Sharded so that
   * a large app's presence changes spread over many partition-key values.
   */
  presence: {
    id: "Presence",
    partitionKey: S(TABLE_KEYS.presence.partitionKey),
    indexes: [{ name: "online", partitionKey: S("onlineShard"), sortKey: S("uid") }],
  },
  /**
   * sessions: pk `<appId>#<sessionId>`: a call or meeting with participants and recordings.
   * Index `byTime`: pk `timeBucket` (`<appId>#<yyyy-mm>`, the UTC month of sessionTime), sk
   * `sessionTime` (ms): the sessions in a time range, one query per month of the range. With keys
   * only, the index is written when a session's time changes (mostly once), not on every update.
   * Indexes `byInitiator` / `byReceiver`: pk `<appId>#<uid>`, sk `sessionTime`: the sessions of a user.
   * Sparse index `withRecording`: pk `recordingShard` (`<appId>#<0..RECORDING_SHARDS-1>`, once a
   * recording is known), sk `sessionTime`.
   */
  sessions: {
    id: "Sessions",
    partitionKey: S(TABLE_KEYS.sessions.partitionKey),
    indexes: [
      { name: "byTime", partitionKey: S("timeBucket"), sortKey: N("sessionTime") },
      { name: "byInitiator", partitionKey: S("initiatorKey"), sortKey: N("sessionTime") },
      { name: "byReceiver", partitionKey: S("receiverKey"), sortKey: N("sessionTime") },
      { name: "withRecording", partitionKey: S("recordingShard"), sortKey: N("sessionTime") },
    ],
  },
} as const satisfies Record<ProjectionTableName, TableDefinition>;

/** A projection table's logical id: `Groups`, `Memberships`, … */
export type ProjectionTableId = (typeof PROJECTION_TABLES)[ProjectionTableName]["id"];
/** A projection table's declaration. */
export type ProjectionTableDefinition = TableDefinition & { readonly id: ProjectionTableId };

/**
 * A table's key attributes, by name: its partition key, then its sort key if it has one.
 *
 * @example keyAttributeNames(MEMBERSHIPS_TABLE) // ["pk", "uid"]
 */
export function keyAttributeNames(definition: Pick<TableDefinition, "partitionKey" | "sortKey">): string[] {
  return [definition.partitionKey.name, ...(definition.sortKey ? [definition.sortKey.name] : [])];
}

/** The key of an item in a table: its key attributes and their values. */
export function keyOfItem(
  definition: Pick<TableDefinition, "partitionKey" | "sortKey">,
  item: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(keyAttributeNames(definition).map((name) => [name, item[name]]));
}

/** The projection tables' definitions, in declaration order. */
export const TABLE_DEFINITIONS: readonly ProjectionTableDefinition[] = PROJECTION_TABLE_NAMES.map(
  (name) => PROJECTION_TABLES[name],
);

/** The deployed (or local) names of the projection tables. */
export type TableNames = Record<ProjectionTableName, string>;

/**
 * One value per projection table, in declaration order.
 *
 * @example byTable((name) => `local-${name}`) // { groups: "local-groups", memberships: "local-memberships", … }
 */
export function byTable<T>(
  value: (name: ProjectionTableName, definition: ProjectionTableDefinition) => T,
): Record<ProjectionTableName, T> {
  // The keys are exactly PROJECTION_TABLE_NAMES: the record is complete.
  return Object.fromEntries(
    PROJECTION_TABLE_NAMES.map((name) => [name, value(name, PROJECTION_TABLES[name])]),
  ) as Record<ProjectionTableName, T>;
}

/** The environment variable that gives a function a table's deployed name. */
export type TableEnvVar<N extends ProjectionTableName = ProjectionTableName> = `${Uppercase<N>}_TABLE`;

/**
 * @example tableEnvVar("groups") // "GROUPS_TABLE"
 */
export function tableEnvVar<N extends ProjectionTableName>(name: N): TableEnvVar<N> {
  return `${name.toUpperCase() as Uppercase<N>}_TABLE`;
}

/**
 * The variables that give a function the tables' deployed names.
 *
 * @example tableEnvironment(names) // { GROUPS_TABLE: names.groups, MEMBERSHIPS_TABLE: names.memberships, … }
 */
export function tableEnvironment(names: TableNames): Record<TableEnvVar, string> {
  // The keys are exactly the tables' variables: the record is complete.
  return Object.fromEntries(PROJECTION_TABLE_NAMES.map((name) => [tableEnvVar(name), names[name]])) as Record<
    TableEnvVar,
    string
  >;
}

/**
 * The stack output that gives a table's deployed name (what `--stack` reads).
 *
 * @example tableOutput("groups") // "GroupsTable"
 */
export function tableOutput(name: ProjectionTableName): `${ProjectionTableId}Table` {
  return `${PROJECTION_TABLES[name].id}Table`;
}

/** Shorthands for the code that uses one table by itself. */
export const GROUPS_TABLE = PROJECTION_TABLES.groups;
export const MEMBERSHIPS_TABLE = PROJECTION_TABLES.memberships;
export const PRESENCE_TABLE = PROJECTION_TABLES.presence;
export const SESSIONS_TABLE = PROJECTION_TABLES.sessions;

/**
 * activity: the figures the rollup computes from the raw archive (`shared/analytics`), replaced
 * as a whole day at a time. Not a projection: the projector never writes it.
 * - pk `<appId>#days`, sk `<yyyy-mm-dd>`: a day's figures (an app's days in a range: one Query);
 * - pk `<appId>#<yyyy-mm-dd>`, sk `hour#<hh>`: its hours (one Query, `begins_with(sk, "hour#")`);
 * - same pk, sk `top#groups#<rank>` / `top#users#<rank>`: its busiest groups and users, rank
 *   001 first (one Query with a Limit).
 */
export const ACTIVITY_TABLE = {
  id: "Activity",
  partitionKey: S("pk"),
  sortKey: S("sk"),
  indexes: [],
} as const satisfies TableDefinition;

/**
 * apps: the deployment's per-app settings, one item per app and kind of record, so that 10,000
 * apps fit (a Lambda's environment holds ~250 ids in its 4 KB). Read by the ingest with GetItem
 * (cached per app, `shared/apps/allowlist.ts`), written and listed by the CLI (`connect`).
 * - pk `appId`, sk `allowed`: the app may deliver (when the deployment restricts apps);
 * - pk `appId`, sk `webhook`: the platform webhook `connect` pointed at this deployment.
 */
export const APPS_TABLE: Omit<TableDefinition, "id"> & { id: "Apps" } = {
  id: "Apps",
  partitionKey: S("appId"),
  sortKey: S("record"),
  indexes: [],
};

/**
 * Why DynamoDB cannot hold this item's keys (a string partition key over 2,048 bytes or sort key
 * over 1,024, of the table or of an index), or undefined when it can. DynamoDB refuses such a
 * key in any call, a `BatchGetItem` of many items included; an event with one is quarantined.
 *
 * @example keyLimitViolation(MEMBERSHIPS_TABLE, { pk: "app#g1", uid: "u".repeat(1100) })
 *   // "Memberships: sort key uid is 1,100 bytes (DynamoDB holds at most 1,024)"
 */
export function keyLimitViolation(table: TableDefinition, item: Record<string, unknown>): string | undefined {
  const keys = [table, ...table.indexes].flatMap((owner) => [
    { owner, attribute: owner.partitionKey, kind: "partition key", max: DYNAMO_PARTITION_KEY_MAX_BYTES },
    ...(owner.sortKey
      ? [{ owner, attribute: owner.sortKey, kind: "sort key", max: DYNAMO_SORT_KEY_MAX_BYTES }]
      : []),
  ]);
  for (const { owner, attribute, kind, max } of keys) {
    const value = item[attribute.name];
    if (typeof value !== "string") continue;
    const bytes = Buffer.byteLength(value, "utf8");
    if (bytes > max) {
      const where = owner === table ? table.id : `${table.id} index ${"name" in owner ? owner.name : ""}`;
      return `${where}: ${kind} ${attribute.name} is ${bytes.toLocaleString("en-US")} bytes (DynamoDB holds at most ${max.toLocaleString("en-US")})`;
    }
  }
  return undefined;
}

/**
 * Where an item holds an empty attribute name (an empty key of a map, at any depth), which
 * DynamoDB refuses ("ValidationException: Empty attribute name") and the in-memory store would
 * take, or undefined when it holds none (#57: a transcript keyed `""` dead-lettered its batch).
 *
 * @example emptyAttributeName({ transcripts: { "": {} } }) // "an empty attribute name in transcripts"
 */
export function emptyAttributeName(item: unknown, path = ""): string | undefined {
  if (item === null || typeof item !== "object") return undefined;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    if (name === "" && !Array.isArray(item)) return `an empty attribute name in ${path || "the item"}`;
    const found = emptyAttributeName(value, path ? `${path}.${name}` : name);
    if (found) return found;
  }
  return undefined;
}

/** Every shard key of an app (a query fans out over them). */
export function shardKeys(appId: string, shards: number): string[] {
  return Array.from({ length: shards }, (_, n) => appKey(appId, String(n)));
}

/** The indexes whose partition key is a shard of the app, and how many shards each has. */
const SHARDED_INDEXES = {
  online: { table: PRESENCE_TABLE, shards: ONLINE_SHARDS },
  withRecording: { table: SESSIONS_TABLE, shards: RECORDING_SHARDS },
} as const;

/**
 * One Query per shard of a sharded index of an app: the index, its key condition and value (the
 * caller adds the table name, and paging or `Select`).
 *
 * @example shardQueries("app1", "online")[0] // { IndexName: "online", KeyConditionExpression: "onlineShard = :s", ExpressionAttributeValues: { ":s": "app1#0" } }
 */
export function shardQueries(appId: string, indexName: keyof typeof SHARDED_INDEXES) {
  const { table, shards } = SHARDED_INDEXES[indexName];
  const attribute = table.indexes.find((i) => i.name === indexName)?.partitionKey.name;
  return shardKeys(appId, shards).map((shard) => ({
    IndexName: indexName,
    KeyConditionExpression: `${attribute} = :s`,
    ExpressionAttributeValues: { ":s": shard },
  }));
}

/** The month buckets a time range covers, oldest first. */
export function monthBuckets(appId: string, fromMs: number, toMs: number): string[] {
  const buckets: string[] = [];
  const from = new Date(fromMs);
  for (let month = from.getUTCFullYear() * 12 + from.getUTCMonth(); ; month++) {
    const start = Date.UTC(Math.floor(month / 12), month % 12, 1);
    if (start > toMs) return buckets;
    buckets.push(monthBucket(appId, start));
  }
}
