import { DeleteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { documentClient, rewriteItem } from "../../shared/adapters/dynamo-item-store";
import { itemErasure } from "../../shared/erasure/redact";
import { keyOfItem, PROJECTION_TABLES, type TableNames } from "../../shared/platform/tables";
import { projectionStores } from "../../shared/projector/stores";
import { createProjectionTables, localTableNames } from "../../tools/local/provision";
import { testClients, uniqueName } from "../support/aws";
import { sevenHistories } from "../support/busy-histories";
import { memoryDeps } from "../support/projection";
import { batchSizes, REFERENCE_APP, referenceHistories } from "../support/reference/draw";
import { type RunTables, runAgainstReference } from "../support/reference/run";

/**
 * The one-state property against the reference (#57) on DynamoDB Local: a share of the drawn runs
 * of `unit/one-state-reference` with the projector's real store, so that what the in-memory store
 * accepts and DynamoDB refuses (an empty map key, an item over 400 KB, a reserved word) is inside
 * the property; the erasure goes through `rewriteItem`, the erasure's own conditional rewrite.
 */

const { dynamo } = testClients();
const doc = documentClient(dynamo);
let names: TableNames;
const TABLES = ["groups", "memberships", "presence", "sessions"] as const;

/** Drawn runs on DynamoDB Local by default (each a few hundred requests). */
const DYNAMO_RUNS = Number(process.env.ONE_STATE_DYNAMO_RUNS ?? 8);

beforeAll(async () => {
  names = localTableNames(uniqueName("onestate"));
  await createProjectionTables(dynamo, names);
});

/** Every item of a table, all pages. */
async function scan(table: (typeof TABLES)[number]): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(new ScanCommand({ TableName: names[table], ExclusiveStartKey }));
    items.push(...(out.Items ?? []));
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}

const idOf = (table: (typeof TABLES)[number], item: Record<string, unknown>) =>
  `${item.pk}|${PROJECTION_TABLES[table].sortKey ? item[PROJECTION_TABLES[table].sortKey?.name ?? ""] : ""}`;

/** Fresh tables for a run: every item of the last one deleted. */
async function emptied(): Promise<RunTables> {
  for (const table of TABLES)
    for (const item of await scan(table))
      await doc.send(
        new DeleteCommand({ TableName: names[table], Key: keyOfItem(PROJECTION_TABLES[table], item) }),
      );
  return {
    deps: memoryDeps(projectionStores(dynamo, names)),
    read: async () =>
      Object.fromEntries(
        await Promise.all(
          TABLES.map(
            async (t) => [t, new Map((await scan(t)).map((item) => [idOf(t, item), item]))] as const,
          ),
        ),
      ) as Awaited<ReturnType<RunTables["read"]>>,
    erase: async (redaction) => {
      for (const table of TABLES)
        for (const item of await scan(table)) {
          // The erasure's plan hands it the user's own presence, and the items naming them.
          if (table === "presence" && item.uid !== redaction.uid) continue;
          await rewriteItem(
            doc,
            PROJECTION_TABLES[table],
            names[table],
            keyOfItem(PROJECTION_TABLES[table], item),
            (i) => itemErasure(table, i, redaction),
          );
        }
    },
  };
}

describe("the one-state property on DynamoDB Local", () => {
  it("a transcript with neither tid nor startTime is written under a key DynamoDB takes (#57 item 5)", async () => {
    const bare = sevenHistories(REFERENCE_APP).find((c) => c.name.startsWith("5:"));
    if (!bare) throw new Error("the named history 5 is missing");
    expect(await runAgainstReference(bare.history, bare.order, bare.sizes, await emptied())).toEqual([]);
  });

  it(`drawn histories: the tables, the copy and the tables after reconcile and erasure are what the documents say (${DYNAMO_RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(referenceHistories, batchSizes, async ({ history, order }, sizes) => {
        expect(await runAgainstReference(history, order, sizes, await emptied())).toEqual([]);
      }),
      { numRuns: DYNAMO_RUNS },
    );
  }, 240_000);
});
