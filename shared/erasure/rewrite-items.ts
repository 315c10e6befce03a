import { DeleteCommand, PutCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import {
  ACTIVITY_TABLE,
  keyOfItem,
  PROJECTION_TABLES,
  type TableDefinition,
  type TableNames,
} from "../platform/tables";
import type { ErasureCounts } from "./erasure-state";
import { getItem, keyOf } from "./find-items";
import type { ErasurePlan, ForgetDependencies } from "./plan";
import { type Redaction, redactValue } from "./redact";

/*
 * The erasure's step "rewrite items": the user's own items deleted, the items that name them
 * redacted; or, for a whole app, every item of the app deleted.
 */

/**
 * Deletes the user's presence and memberships, redacts the sessions and groups that name them.
 *
 * @example await eraseItems(deps, plan, redaction, counts) // counts.itemsDeleted: 3, itemsRedacted: 5
 */
export async function eraseItems(
  deps: ForgetDependencies,
  plan: ErasurePlan,
  redaction: Redaction,
  counts: ErasureCounts,
): Promise<void> {
  for (const { table, key } of plan.items) {
    const item = await getItem(deps, table, key);
    if (!item) continue;
    const own = table === "presence" || (table === "memberships" && item.uid === redaction.uid);
    await deps.checkpoint?.(`item ${table}`);
    if (own) {
      await deps.doc.send(new DeleteCommand({ TableName: deps.tables[table], Key: key }));
      counts.itemsDeleted++;
      continue;
    }
    const next = redactValue(item, redaction) as Record<string, unknown>;
    if (JSON.stringify(next) === JSON.stringify(item)) continue;
    const nextKey = keyOf(table, next);
    await deps.doc.send(new PutCommand({ TableName: deps.tables[table], Item: next }));
    if (JSON.stringify(nextKey) !== JSON.stringify(key))
      await deps.doc.send(new DeleteCommand({ TableName: deps.tables[table], Key: key }));
    counts.itemsRedacted++;
  }
}

/**
 * Deletes every item of the app in the projection tables and its figures (a whole-app erasure).
 *
 * @example await eraseAppItems(deps, "app1", counts) // counts.itemsDeleted: 840
 */
export async function eraseAppItems(
  deps: ForgetDependencies,
  appId: string,
  counts: ErasureCounts,
): Promise<void> {
  const targets = [
    ...Object.entries(deps.tables).map(([table, tableName]) => ({
      tableName,
      definition: PROJECTION_TABLES[table as keyof TableNames] as TableDefinition,
    })),
    { tableName: deps.state.tableName, definition: ACTIVITY_TABLE },
  ];
  for (const { tableName, definition } of targets) {
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const out = await deps.doc.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: "begins_with(pk, :app)",
          ExpressionAttributeValues: { ":app": `${appId}#` },
          ExclusiveStartKey,
        }),
      );
      for (const item of out.Items ?? []) {
        // The app's erasure records stay: they are what says the app was erased.
        if (item.pk === `${appId}#erasures`) continue;
        await deps.checkpoint?.(`item ${tableName}`);
        await deps.doc.send(new DeleteCommand({ TableName: tableName, Key: keyOfItem(definition, item) }));
        counts.itemsDeleted++;
      }
      ExclusiveStartKey = out.LastEvaluatedKey;
    } while (ExclusiveStartKey);
  }
}
