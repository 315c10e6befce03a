import { CreateTableCommand, type DynamoDBClient, ResourceInUseException } from "@aws-sdk/client-dynamodb";
import {
  ACTIVITY_TABLE,
  APPS_TABLE,
  TABLE_DEFINITIONS,
  type TableDefinition,
  type TableNames,
} from "../../shared/platform/tables";

const NAME_OF: Record<TableDefinition["id"], keyof TableNames> = {
  Groups: "groups",
  Memberships: "memberships",
  Presence: "presence",
  Sessions: "sessions",
};

/** Local table names: `<prefix>-groups`, … */
export function localTableNames(prefix: string): TableNames {
  return {
    groups: `${prefix}-groups`,
    memberships: `${prefix}-memberships`,
    presence: `${prefix}-presence`,
    sessions: `${prefix}-sessions`,
  };
}

/** CreateTable input from a shared definition: the same keys and indexes the CDK app deploys. */
export function createTableInput(definition: Omit<TableDefinition, "id">, tableName: string) {
  const attributes = new Map<string, "S" | "N">();
  const keySchema = (pk: { name: string; type: "S" | "N" }, sk?: { name: string; type: "S" | "N" }) => {
    attributes.set(pk.name, pk.type);
    if (sk) attributes.set(sk.name, sk.type);
    return [
      { AttributeName: pk.name, KeyType: "HASH" as const },
      ...(sk ? [{ AttributeName: sk.name, KeyType: "RANGE" as const }] : []),
    ];
  };
  const KeySchema = keySchema(definition.partitionKey, definition.sortKey);
  const GlobalSecondaryIndexes = definition.indexes.map((index) => ({
    IndexName: index.name,
    KeySchema: keySchema(index.partitionKey, index.sortKey),
    Projection: { ProjectionType: "KEYS_ONLY" as const },
  }));
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST" as const,
    KeySchema,
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType,
    })),
    ...(GlobalSecondaryIndexes.length ? { GlobalSecondaryIndexes } : {}),
  };
}

/** Creates the four projection tables if they do not exist yet. */
export async function createProjectionTables(client: DynamoDBClient, names: TableNames): Promise<void> {
  for (const definition of TABLE_DEFINITIONS)
    await createTable(client, definition, names[NAME_OF[definition.id]]);
}

/** The local activity table's name: `<prefix>-activity`. */
export const localActivityTableName = (prefix: string): string => `${prefix}-activity`;

/** Creates the activity table (the rollup's figures) if it does not exist yet. */
export async function createActivityTable(client: DynamoDBClient, name: string): Promise<void> {
  await createTable(client, ACTIVITY_TABLE, name);
}

/** The local apps table's name: `<prefix>-apps`. */
export const localAppsTableName = (prefix: string): string => `${prefix}-apps`;

/** Creates the apps table (per-app settings) if it does not exist yet. */
export async function createAppsTable(client: DynamoDBClient, name: string): Promise<void> {
  await createTable(client, APPS_TABLE, name);
}

async function createTable(client: DynamoDBClient, definition: Omit<TableDefinition, "id">, name: string) {
  try {
    await client.send(new CreateTableCommand(createTableInput(definition, name)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
}
