import { CreateTableCommand, type DynamoDBClient, ResourceInUseException } from "@aws-sdk/client-dynamodb";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import {
  ACTIVITY_TABLE,
  APPS_TABLE,
  byTable,
  PROJECTION_TABLES,
  type TableDefinition,
  type TableNames,
} from "../../shared/platform/tables";

/** Local table names: `<prefix>-<name>` (`<prefix>-groups`, …). */
export function localTableNames(prefix: string): TableNames {
  return byTable((name) => `${prefix}-${name}`);
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

/** Creates the projection tables if they do not exist yet. */
export async function createProjectionTables(client: DynamoDBClient, names: TableNames): Promise<void> {
  for (const name of PROJECTION_TABLE_NAMES) await createTable(client, PROJECTION_TABLES[name], names[name]);
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
