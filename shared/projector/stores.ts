import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type DynamoItemStoreOptions, documentClient, dynamoItemStore } from "../adapters/dynamo-item-store";
import {
  GROUPS_TABLE,
  MEMBERSHIPS_TABLE,
  PRESENCE_TABLE,
  SESSIONS_TABLE,
  type TableNames,
} from "../platform/tables";
import type { ProjectionStores } from "./core";

/** The four projection stores over one DynamoDB client. */
export function projectionStores(
  client: DynamoDBClient,
  names: TableNames,
  options: DynamoItemStoreOptions = {},
): ProjectionStores {
  const doc = documentClient(client);
  return {
    groups: dynamoItemStore(doc, GROUPS_TABLE, names.groups, options),
    memberships: dynamoItemStore(doc, MEMBERSHIPS_TABLE, names.memberships, options),
    presence: dynamoItemStore(doc, PRESENCE_TABLE, names.presence, options),
    sessions: dynamoItemStore(doc, SESSIONS_TABLE, names.sessions, options),
  };
}
