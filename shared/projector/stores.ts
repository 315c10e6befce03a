import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type DynamoItemStoreOptions, documentClient, dynamoItemStore } from "../adapters/dynamo-item-store";
import { PROJECTION_TABLES, type TableNames } from "../platform/tables";
import { type ProjectionStores, storesByTable } from "./registry";

/** The projection stores over one DynamoDB client: one per projection table. */
export function projectionStores(
  client: DynamoDBClient,
  names: TableNames,
  options: DynamoItemStoreOptions = {},
): ProjectionStores {
  const doc = documentClient(client);
  return storesByTable((table) => dynamoItemStore(doc, PROJECTION_TABLES[table], names[table], options));
}
