import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { queryAll } from "../adapters/dynamo-reads";
import { shardQueries } from "../platform/tables";

/**
 * The uids an app holds online now: one Query per shard of the presence table's `online` index
 * (keys only; the uid is the sort key). Never a Scan.
 *
 * @example await onlineUids(documentClient(client), names.presence, "app1") // ["u1", "u7"]
 */
export async function onlineUids(
  doc: DynamoDBDocumentClient,
  tableName: string,
  appId: string,
): Promise<string[]> {
  const uids: string[] = [];
  for (const query of shardQueries(appId, "online")) {
    const keys = await queryAll(doc, { TableName: tableName, ...query });
    for (const item of keys) if (typeof item.uid === "string") uids.push(item.uid);
  }
  return uids;
}
