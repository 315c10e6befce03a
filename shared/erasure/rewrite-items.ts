import { DeleteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { rewriteItem } from "../adapters/dynamo-item-store";
import {
  ACTIVITY_TABLE,
  keyOfItem,
  PROJECTION_TABLES,
  type TableDefinition,
  type TableNames,
} from "../platform/tables";
import type { ErasureCounts } from "./erasure-state";
import type { ErasurePlan, ForgetDependencies } from "./plan";
import { itemErasure, type Redaction } from "./redact";

/*
 * The erasure's step "rewrite items": the user's own items deleted, the items that name them
 * redacted; or, for a whole app, every item of the app deleted.
 */

/**
 * Deletes the user's presence and memberships, redacts the sessions, groups and memberships that
 * name them (`itemErasure`), each through `rewriteItem`: conditional on the `rev` read and bumping
 * it, so that a projector that read the item before never writes its stale state over the change.
 *
 * @example await eraseItems(deps, plan, redaction, counts) // counts.itemsDeleted: 3, itemsRedacted: 5
 */
export async function eraseItems(
  deps: ForgetDependencies,
  plan: Pick<ErasurePlan, "items">,
  redaction: Redaction,
  counts: ErasureCounts,
): Promise<void> {
  for (const { table, key } of plan.items) {
    await deps.checkpoint?.(`item ${table}`);
    const outcome = await rewriteItem(deps.doc, PROJECTION_TABLES[table], deps.tables[table], key, (item) =>
      itemErasure(table, item, redaction),
    );
    if (outcome === "deleted") counts.itemsDeleted++;
    else if (outcome === "written" || outcome === "moved") counts.itemsRedacted++;
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
