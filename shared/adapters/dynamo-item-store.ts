import {
  ConditionalCheckFailedException,
  type ConsumedCapacity,
  type DynamoDBClient,
} from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
} from "@aws-sdk/lib-dynamodb";
import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import type { ItemKey } from "@webhook-backend/stream/projections/types";
import pLimit from "p-limit";
import { ItemContentionError, ItemLimitError } from "../platform/errors";
import { emptyAttributeName, keyLimitViolation, keyOfItem, type TableDefinition } from "../platform/tables";
import type { ApplyResult, ItemStore } from "../ports/item-store";
import { batchGetAll } from "./dynamo-reads";

/** The batched read's failures after which each item reads itself: throttling, unprocessed keys. */
const THROTTLED = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "RequestLimitExceeded",
  "StorageError",
]);

/** Builds the DocumentClient every projection store shares (undefined values are dropped). */
export function documentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** Conditional-write attempts on one item before giving up (the record is then retried by SQS). */
export const MAX_APPLY_ATTEMPTS = 8;

/**
 * A projection table in DynamoDB. Each item holds the state's fields as attributes plus `rev`,
 * a counter the conditional write checks (optimistic concurrency): the write succeeds only if
 * nobody wrote the item since it was read. The event-time rules live in the pure evolve
 * functions; `rev` makes applying them atomic per item.
 */
/** What one call consumed, from `ReturnConsumedCapacity` (the `ProjectorWriteUnits` metric). */
export interface ConsumedUnits {
  table: string;
  readUnits: number;
  writeUnits: number;
}

export interface DynamoItemStoreOptions {
  /** Called with the capacity every read and write consumed. */
  onCapacity?: (units: ConsumedUnits) => void;
  /** Conditional writes in flight at once in `applyMany`. @default 16 */
  concurrency?: number;
}

/** DynamoDB's answer to an item over 400 KB (a `ValidationException`). */
function isItemTooLarge(error: unknown): boolean {
  const { name, message } = error as { name?: string; message?: string };
  return name === "ValidationException" && /item size/i.test(message ?? "");
}

function isConflict(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as { name?: string }).name === "ConditionalCheckFailedException"
  );
}

/**
 * A projection table in DynamoDB. Each item holds the state's fields as attributes plus `rev`,
 * a counter the conditional write checks (optimistic concurrency): the write succeeds only if
 * nobody wrote the item since it was read. The event-time rules live in the pure evolve
 * functions; `rev` makes applying them atomic per item.
 *
 * @example const groups = dynamoItemStore<GroupState>(documentClient(client), GROUPS_TABLE, names.groups)
 */
export function dynamoItemStore<S extends object>(
  doc: DynamoDBDocumentClient,
  table: TableDefinition,
  tableName: string,
  options: DynamoItemStoreOptions = {},
): ItemStore<S> {
  const limit = pLimit(options.concurrency ?? 16);
  // Total units of the call, index copies included (`INDEXES` on writes): reads and writes are
  // told apart by the call, as DynamoDB Local reports only CapacityUnits.
  const consumed = (capacity: ConsumedCapacity | undefined, kind: "read" | "write") => {
    if (!capacity) return;
    const units =
      (kind === "read" ? capacity.ReadCapacityUnits : capacity.WriteCapacityUnits) ??
      capacity.CapacityUnits ??
      0;
    options.onCapacity?.({
      table: tableName,
      readUnits: kind === "read" ? units : 0,
      writeUnits: kind === "write" ? units : 0,
    });
  };
  const keyOf = (key: ItemKey) => {
    const sortKey = table.sortKey;
    return sortKey
      ? { [table.partitionKey.name]: key.pk, [sortKey.name]: key.sk }
      : { [table.partitionKey.name]: key.pk };
  };
  const idOf = (item: Record<string, unknown>) =>
    `${item[table.partitionKey.name]}|${table.sortKey ? item[table.sortKey.name] : ""}`;
  const stored = (item: Record<string, unknown> | undefined) => {
    if (!item) return { state: null, rev: 0 };
    const { rev, ...state } = item;
    return { state: state as S, rev: typeof rev === "number" ? rev : 0 };
  };
  const read = async (key: ItemKey, consistent: boolean) => {
    const out = await doc.send(
      new GetCommand({
        TableName: tableName,
        Key: keyOf(key),
        ConsistentRead: consistent,
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    consumed(out.ConsumedCapacity, "read");
    return stored(out.Item);
  };
  /** Reads many items at once (BatchGetItem), by their id. */
  const readMany = (keys: readonly ItemKey[]) =>
    batchGetAll(doc, tableName, keys.map(keyOf), idOf, (capacity) => consumed(capacity, "read"));
  /** One conditional write of `next` over the state read at `rev`; false when someone wrote in between. */
  const write = async (key: ItemKey, state: S | null, rev: number, next: S): Promise<boolean> => {
    const item = { ...next, ...keyOf(key), rev: rev + 1 };
    // An index key the state grew (a long uid as `userKey`) would fail the write on every retry.
    const violation = keyLimitViolation(table, item);
    if (violation) throw new ItemLimitError(violation);
    // DynamoDB refuses an empty map key on every retry: quarantined with why, never dead-lettered.
    const empty = emptyAttributeName(item);
    if (empty) throw new ItemLimitError(`${table.id}: item ${key.pk.slice(0, 200)}: ${empty}`);
    try {
      const out = await doc.send(
        new PutCommand({
          TableName: tableName,
          Item: item,
          ConditionExpression: state === null ? "attribute_not_exists(#pk)" : "#rev = :rev",
          ExpressionAttributeNames: state === null ? { "#pk": table.partitionKey.name } : { "#rev": "rev" },
          ExpressionAttributeValues: state === null ? undefined : { ":rev": rev },
          ReturnConsumedCapacity: "INDEXES",
        }),
      );
      consumed(out.ConsumedCapacity, "write");
      return true;
    } catch (error) {
      if (isItemTooLarge(error))
        throw new ItemLimitError(
          `${table.id}: item ${key.pk.slice(0, 200)} would be ~${Buffer.byteLength(JSON.stringify(item)).toLocaleString("en-US")} bytes, over DynamoDB's 400 KB`,
        );
      if (!isConflict(error)) throw error;
      return false;
    }
  };
  const apply = async (
    key: ItemKey,
    update: (state: S | null) => S,
    first?: { state: S | null; rev: number },
  ): Promise<ApplyResult<S>> => {
    const violation = keyLimitViolation(table, keyOf(key));
    if (violation) throw new ItemLimitError(violation);
    for (let attempt = 1; attempt <= MAX_APPLY_ATTEMPTS; attempt++) {
      // An eventually consistent read is enough: a stale read fails the condition and retries.
      const { state, rev } = attempt === 1 && first ? first : await read(key, attempt > 1);
      const next = update(state);
      if (state !== null && canonicalJson(next) === canonicalJson(state))
        return { before: state, after: state };
      if (await write(key, state, rev, next)) return { before: state, after: next };
      // Someone wrote the item in between: read again and re-apply.
    }
    throw new ItemContentionError(
      `item ${key.pk}${key.sk ? `/${key.sk}` : ""} kept changing under ${MAX_APPLY_ATTEMPTS} attempts`,
    );
  };
  return {
    async get(key) {
      return (await read(key, true)).state;
    },
    apply: (key, update) => apply(key, update),
    async applyMany(updates) {
      // One batched read; if it is throttled beyond the SDK's retries (or keys stay unprocessed),
      // each item reads itself, so that an item fails only on its own read or write. Any other
      // failure (access denied, a missing table) fails every item with it, without N more reads.
      // A key DynamoDB cannot hold fails the batched read for all: such an item fails alone.
      const readable = updates.filter((u) => keyLimitViolation(table, keyOf(u.key)) === undefined);
      let found: Awaited<ReturnType<typeof readMany>> | undefined;
      try {
        found = await readMany(readable.map((u) => u.key));
      } catch (error) {
        if (!THROTTLED.has((error as { name?: string }).name ?? ""))
          return updates.map(() => ({ ok: false as const, error }));
      }
      return Promise.all(
        updates.map(({ key, update }) =>
          limit(async () => {
            try {
              const first = found ? stored(found.get(idOf(keyOf(key)))) : undefined;
              return { ok: true as const, ...(await apply(key, update, first)) };
            } catch (error) {
              return { ok: false as const, error };
            }
          }),
        ),
      );
    },
  };
}

/**
 * What a rewrite makes of a stored item: the next item (with the same key, or another: the item
 * moves), `null` to delete it, or `undefined` to leave it as it is.
 */
export type ItemRewrite = (item: Record<string, unknown>) => Record<string, unknown> | null | undefined;

/** What became of an item a rewrite was given: not there, left, written in place, moved to another key, deleted. */
export type ItemRewriteOutcome = "absent" | "unchanged" | "written" | "moved" | "deleted";

/** A write's condition, as the commands take it. */
interface WriteCondition {
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** The condition that the stored item is still the one read: its `rev` (an item written before `rev` has none). */
function sameRevision(table: TableDefinition, rev: unknown): WriteCondition {
  if (typeof rev === "number")
    return {
      ConditionExpression: "#rev = :rev",
      ExpressionAttributeNames: { "#rev": "rev" },
      ExpressionAttributeValues: { ":rev": rev },
    };
  return {
    ConditionExpression: "attribute_exists(#pk) AND attribute_not_exists(#rev)",
    ExpressionAttributeNames: { "#pk": table.partitionKey.name, "#rev": "rev" },
  };
}

/** A transaction cancelled because a condition failed (or another transaction held an item). */
function isCancelledByCondition(error: unknown): boolean {
  const reasons = (error as { name?: string; CancellationReasons?: Array<{ Code?: string }> })
    .CancellationReasons;
  return (
    (error as { name?: string }).name === "TransactionCanceledException" &&
    (reasons ?? []).some((r) => r.Code === "ConditionalCheckFailed" || r.Code === "TransactionConflict")
  );
}

/**
 * Rewrites one stored projection item the way every writer of one does (docs/design-and-limits.md,
 * "Writers meet"): reads it strongly consistent, then writes `change(item)` on condition that its
 * `rev` is still the one read, with `rev` bumped; a delete is conditional on the same `rev`. When
 * someone wrote the item in between (the projector), it reads again and re-applies `change`, up to
 * `MAX_APPLY_ATTEMPTS` times (then `ItemContentionError`). So a writer that read the item before
 * this rewrite fails its own condition and re-applies its update over the rewritten item: it can
 * never put back what the rewrite replaced. An item whose key changes moves in one transaction:
 * the new key written where nothing is, the old one deleted at the `rev` read. The erasure's one
 * way to change an item.
 *
 * @example await rewriteItem(doc, GROUPS_TABLE, names.groups, { pk: "app1#g1" }, (item) => ({ ...item, owner: "erased-7f" })) // "written"
 */
export async function rewriteItem(
  doc: DynamoDBDocumentClient,
  table: TableDefinition,
  tableName: string,
  key: Record<string, unknown>,
  change: ItemRewrite,
): Promise<ItemRewriteOutcome> {
  for (let attempt = 1; attempt <= MAX_APPLY_ATTEMPTS; attempt++) {
    const { Item: item } = await doc.send(
      new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
    );
    if (!item) return "absent";
    const next = change(item);
    if (next === undefined) return "unchanged";
    const condition = sameRevision(table, item.rev);
    try {
      if (next === null) {
        await doc.send(new DeleteCommand({ TableName: tableName, Key: key, ...condition }));
        return "deleted";
      }
      const written = { ...next, rev: (typeof item.rev === "number" ? item.rev : 0) + 1 };
      const nextKey = keyOfItem(table, written);
      const violation = keyLimitViolation(table, written);
      if (violation) throw new ItemLimitError(violation);
      if (canonicalJson(nextKey) === canonicalJson(keyOfItem(table, item))) {
        await doc.send(new PutCommand({ TableName: tableName, Item: written, ...condition }));
        return "written";
      }
      await doc.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: tableName,
                Item: written,
                ConditionExpression: "attribute_not_exists(#pk)",
                ExpressionAttributeNames: { "#pk": table.partitionKey.name },
              },
            },
            { Delete: { TableName: tableName, Key: key, ...condition } },
          ],
        }),
      );
      return "moved";
    } catch (error) {
      if (!isConflict(error) && !isCancelledByCondition(error)) throw error;
      // Someone wrote the item in between: read again and re-apply.
    }
  }
  throw new ItemContentionError(
    `item ${String(Object.values(key)[0]).slice(0, 200)} kept changing under ${MAX_APPLY_ATTEMPTS} attempts`,
  );
}
