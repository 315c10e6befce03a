import { type DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { APPS_TABLE } from "../platform/tables";
import type { AllowedAppLookup } from "./allowlist";
import { APP_RECORD } from "./records";

/**
 * The ingest's read of the apps table: one eventually consistent GetItem of the app's `allowed`
 * record, its key only (0.5 read unit). The plain client, not the document client: the ingest's
 * bundle is size-sensitive, and a key is all it reads.
 *
 * @example const lookup = dynamoAllowedAppLookup(new DynamoDBClient({}), "apps"); await lookup("app1") // true
 */
export function dynamoAllowedAppLookup(client: DynamoDBClient, tableName: string): AllowedAppLookup {
  const pk = APPS_TABLE.partitionKey.name;
  const sk = APPS_TABLE.sortKey?.name ?? "record";
  return async (appId) => {
    const out = await client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { [pk]: { S: appId }, [sk]: { S: APP_RECORD.allowed } },
        ProjectionExpression: "#pk",
        ExpressionAttributeNames: { "#pk": pk },
      }),
    );
    return out.Item !== undefined;
  };
}
