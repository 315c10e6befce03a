import { DeleteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { rewriteItem } from "../adapters/dynamo-item-store";
import { queryAll } from "../adapters/dynamo-reads";
import {
  ACTIVITY_TABLE,
  keyOfItem,
  PROJECTION_TABLES,
  type TableDefinition,
  type TableNames,
} from "../platform/tables";
import type { ErasureCounts } from "./erasure-state";
import type { ForgetDependencies, PlannedItem } from "./plan";
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
 * @example await eraseItems(deps, plan.items, redaction, counts) // counts.itemsDeleted: 3, itemsRedacted: 5
 */
export async function eraseItems(
  deps: ForgetDependencies,
  items: ReadonlyArray<Pick<PlannedItem, "table" | "key">>,
  redaction: Redaction,
  counts: ErasureCounts,
): Promise<void> {
  for (const { table, key } of items) {
    await deps.checkpoint?.(`item ${table}`);
    const outcome = await rewriteItem(deps.doc, PROJECTION_TABLES[table], deps.tables[table], key, (item) =>
      itemErasure(table, item, redaction),
    );
    if (outcome === "deleted") counts.itemsDeleted++;
    else if (outcome === "written" || outcome === "moved") counts.itemsRedacted++;
  }
}

/** An item of the app, in a projection table or the activity table. */
interface AppItem {
  definition: TableDefinition;
  tableName: string;
  key: Record<string, unknown>;
}

/**
 * Every item of the app: a Scan of each projection table filtered on the items' `appId` (an app id
 * may hold `#`, so a key prefix `<app>#` could be another app's), and its figures in the activity
 * table by Query on their exact partitions (`<app>#days`, then each day's `<app>#<day>`). The
 * app's erasure records (`<app>#erasures`) are not among them: they are what says it was erased.
 */
async function* appItems(deps: ForgetDependencies, appId: string): AsyncGenerator<AppItem> {
  for (const [table, tableName] of Object.entries(deps.tables)) {
    const definition: TableDefinition = PROJECTION_TABLES[table as keyof TableNames];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const out = await deps.doc.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: "#app = :app",
          ExpressionAttributeNames: { "#app": "appId" },
          ExpressionAttributeValues: { ":app": appId },
          ExclusiveStartKey,
        }),
      );
      for (const item of out.Items ?? []) yield { definition, tableName, key: keyOfItem(definition, item) };
      ExclusiveStartKey = out.LastEvaluatedKey;
    } while (ExclusiveStartKey);
  }
  const activity = { definition: ACTIVITY_TABLE, tableName: deps.state.tableName };
  const partitionOf = (pk: string) =>
    queryAll(deps.doc, {
      TableName: activity.tableName,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": pk },
    });
  for (const day of await partitionOf(`${appId}#days`)) {
    for (const item of await partitionOf(`${appId}#${String(day.sk)}`))
      yield { ...activity, key: keyOfItem(ACTIVITY_TABLE, item) };
    yield { ...activity, key: keyOfItem(ACTIVITY_TABLE, day) };
  }
}

/**
 * How many items a whole app's erasure deletes (`appItems`): what its dry run reports.
 *
 * @example await countAppItems(deps, "app1") // 840
 */
export async function countAppItems(deps: ForgetDependencies, appId: string): Promise<number> {
  let n = 0;
  for await (const _ of appItems(deps, appId)) n++;
  return n;
}

/**
 * Deletes every item of the app in the projection tables and its figures (a whole-app erasure):
 * a projection item conditionally on its `rev` (`rewriteItem`), a figure outright (the activity
 * table's items are replaced a day at a time by the rollup, which the erasure's lease excludes).
 *
 * @example await eraseAppItems(deps, "app1", counts) // counts.itemsDeleted: 840
 */
export async function eraseAppItems(
  deps: ForgetDependencies,
  appId: string,
  counts: ErasureCounts,
): Promise<void> {
  for await (const { definition, tableName, key } of appItems(deps, appId)) {
    await deps.checkpoint?.(`item ${tableName}`);
    if (definition === ACTIVITY_TABLE) {
      await deps.doc.send(new DeleteCommand({ TableName: tableName, Key: key }));
      counts.itemsDeleted++;
    } else if ((await rewriteItem(deps.doc, definition, tableName, key, () => null)) === "deleted")
      counts.itemsDeleted++;
  }
}
