import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { documentClient, dynamoItemStore, MAX_APPLY_ATTEMPTS } from "../../shared/adapters/dynamo-item-store";
import { ItemContentionError } from "../../shared/platform/errors";
import { GROUPS_TABLE } from "../../shared/platform/tables";
import type { ItemStore } from "../../shared/ports/item-store";
import { createProjectionTables, localTableNames } from "../../tools/local/provision";
import { testClients, uniqueName } from "../support/aws";
import { memoryItemStore } from "../support/projection";

interface Counter {
  pk: string;
  n: number;
  tags: string[];
}

const { dynamo } = testClients();
let tableName = "";

beforeAll(async () => {
  const names = localTableNames(uniqueName("store"));
  await createProjectionTables(dynamo, names);
  tableName = names.groups;
});

const increment =
  (tag: string) =>
  (state: Counter | null): Counter => ({
    pk: state?.pk ?? "unset",
    n: (state?.n ?? 0) + 1,
    tags: [...(state?.tags ?? []), tag].sort(),
  });

// The contract every ItemStore keeps: the in-memory one (pure-level tests) and DynamoDB's.
describe.each([
  ["in memory", () => memoryItemStore<Counter>()],
  ["DynamoDB Local", () => dynamoItemStore<Counter>(documentClient(dynamo), GROUPS_TABLE, tableName)],
] as Array<[string, () => ItemStore<Counter>]>)("the ItemStore contract (%s)", (_name, makeStore) => {
  it("reads a missing item as null, creates it, and reads it back", async () => {
    const store = makeStore();
    const key = { pk: uniqueName("k") };
    expect(await store.get(key)).toBeNull();
    const result = await store.apply(key, (s) => ({ ...increment("a")(s), pk: key.pk }));
    expect(result).toMatchObject({ before: null, after: { pk: key.pk, n: 1 } });
    expect(await store.get(key)).toEqual({ pk: key.pk, n: 1, tags: ["a"] });
  });

  it("writes nothing when the update changes nothing", async () => {
    const store = makeStore();
    const key = { pk: uniqueName("k") };
    await store.apply(key, () => ({ pk: key.pk, n: 1, tags: [] }));
    const again = await store.apply(key, (s) => ({ pk: key.pk, n: s?.n ?? 0, tags: s?.tags ?? [] }));
    expect(again.after).toBe(again.before);
    expect(await store.get(key)).toEqual({ pk: key.pk, n: 1, tags: [] });
  });

  it("loses no update when as many writers as it has attempts apply at once", async () => {
    // Each round of conflicting writes has a winner, so MAX_APPLY_ATTEMPTS writers always land.
    const store = makeStore();
    const key = { pk: uniqueName("k") };
    const tags = Array.from({ length: MAX_APPLY_ATTEMPTS }, (_, i) => `w${String(i).padStart(2, "0")}`);
    await Promise.all(tags.map((tag) => store.apply(key, (s) => ({ ...increment(tag)(s), pk: key.pk }))));
    expect(await store.get(key)).toEqual({ pk: key.pk, n: tags.length, tags });
  });
});

describe("the DynamoDB item store under contention", () => {
  it(`gives up with a retryable ItemContentionError after ${MAX_APPLY_ATTEMPTS} conflicting attempts`, async () => {
    // Prepare: a competing writer really writes the item (on DynamoDB Local) just before each of
    // our conditional writes, so every condition fails as it would under a hot item.
    const key = { pk: uniqueName("hot") };
    const rival = testClients().dynamo;
    const client = testClients().dynamo;
    let rivalWrites = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "PutItemCommand") {
          rivalWrites++;
          await rival.send(
            new PutItemCommand({
              TableName: tableName,
              Item: { pk: { S: key.pk }, n: { N: "0" }, rev: { N: String(1000 + rivalWrites) } },
            }),
          );
        }
        return next(args);
      },
      { step: "initialize", name: "rivalWriter" },
    );
    const store = dynamoItemStore<Counter>(documentClient(client), GROUPS_TABLE, tableName);

    // Act
    const error = await store
      .apply(key, (s) => ({ ...increment("mine")(s), pk: key.pk }))
      .catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(ItemContentionError);
    expect((error as ItemContentionError).retryable).toBe(true);
    expect(rivalWrites).toBe(MAX_APPLY_ATTEMPTS);
  });
});
