import { ConditionalCheckFailedException, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { ItemContentionError } from "../platform/errors";
import type { TableDefinition } from "../platform/tables";
import type { ItemStore } from "../ports/item-store";
import { canonicalJson } from "../projections/canonical-json";
import type { ItemKey } from "../projections/types";

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
export function dynamoItemStore<S extends object>(
  doc: DynamoDBDocumentClient,
  table: TableDefinition,
  tableName: string,
): ItemStore<S> {
  const keyOf = (key: ItemKey) => {
    const sortKey = table.sortKey;
    return sortKey
      ? { [table.partitionKey.name]: key.pk, [sortKey.name]: key.sk }
      : { [table.partitionKey.name]: key.pk };
  };
  const read = async (key: ItemKey, consistent: boolean) => {
    const out = await doc.send(
      new GetCommand({ TableName: tableName, Key: keyOf(key), ConsistentRead: consistent }),
    );
    if (!out.Item) return { state: null, rev: 0 };
    const { rev, ...state } = out.Item;
    return { state: state as S, rev: typeof rev === "number" ? rev : 0 };
  };
  return {
    async get(key) {
      return (await read(key, true)).state;
    },
    async apply(key, update) {
      for (let attempt = 1; attempt <= MAX_APPLY_ATTEMPTS; attempt++) {
        // An eventually consistent read is enough: a stale read fails the condition and retries.
        const { state, rev } = await read(key, attempt > 1);
        const next = update(state);
        if (state !== null && canonicalJson(next) === canonicalJson(state))
          return { before: state, after: state };
        try {
          await doc.send(
            new PutCommand({
              TableName: tableName,
              Item: { ...next, ...keyOf(key), rev: rev + 1 },
              ConditionExpression: state === null ? "attribute_not_exists(#pk)" : "#rev = :rev",
              ExpressionAttributeNames:
                state === null ? { "#pk": table.partitionKey.name } : { "#rev": "rev" },
              ExpressionAttributeValues: state === null ? undefined : { ":rev": rev },
            }),
          );
          return { before: state, after: next };
        } catch (error) {
          const conflict =
            error instanceof ConditionalCheckFailedException ||
            (error as { name?: string }).name === "ConditionalCheckFailedException";
          if (!conflict) throw error;
          // Someone wrote the item in between: read again and re-apply.
        }
      }
      throw new ItemContentionError(
        `item ${key.pk}${key.sk ? `/${key.sk}` : ""} kept changing under ${MAX_APPLY_ATTEMPTS} attempts`,
      );
    },
  };
}
