import type { ConsumedCapacity } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  type DynamoDBDocumentClient,
  QueryCommand,
  type QueryCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { StorageError } from "../platform/errors";

type Item = Record<string, unknown>;

/** BatchGetItem's limit of keys per request. */
const BATCH_GET_KEYS = 100;

/**
 * Runs a Query to the end, following LastEvaluatedKey.
 *
 * @example await queryAll(doc, { TableName, IndexName: "online", KeyConditionExpression: "onlineShard = :s", … })
 */
export async function queryAll(doc: DynamoDBDocumentClient, input: QueryCommandInput): Promise<Item[]> {
  const items: Item[] = [];
  let ExclusiveStartKey: Item | undefined;
  do {
    const out = await doc.send(new QueryCommand({ ...input, ExclusiveStartKey }));
    items.push(...(out.Items ?? []));
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

/**
 * Reads the items of many keys of one table: BatchGetItem requests of up to 100 keys, retrying
 * UnprocessedKeys with backoff; gives up with a `StorageError` (retryable) when keys stay
 * unprocessed. Returns the items found, by `idOf`.
 *
 * @example const found = await batchGetAll(doc, table, keys, (item) => String(item.pk))
 */
export async function batchGetAll(
  doc: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly Item[],
  idOf: (item: Item) => string,
  onCapacity?: (capacity: ConsumedCapacity) => void,
): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  for (let i = 0; i < keys.length; i += BATCH_GET_KEYS) {
    let pending: Item[] | undefined = keys.slice(i, i + BATCH_GET_KEYS);
    for (let attempt = 0; pending?.length; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
      if (attempt > 8) throw new StorageError(`${tableName}: ${pending.length} keys stayed unprocessed`);
      const out: BatchGetCommandOutput = await doc.send(
        new BatchGetCommand({
          RequestItems: { [tableName]: { Keys: pending } },
          ...(onCapacity ? { ReturnConsumedCapacity: "TOTAL" as const } : {}),
        }),
      );
      for (const capacity of out.ConsumedCapacity ?? []) onCapacity?.(capacity);
      for (const item of out.Responses?.[tableName] ?? []) found.set(idOf(item), item);
      pending = out.UnprocessedKeys?.[tableName]?.Keys;
    }
  }
  return found;
}
