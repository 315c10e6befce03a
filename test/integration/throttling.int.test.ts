import { createHash, randomUUID } from "node:crypto";
import {
  type AttributeValue,
  type DynamoDBClient,
  ProvisionedThroughputExceededException,
  ThrottlingException,
} from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { SQSRecord } from "aws-lambda";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TABLE_DEFINITIONS } from "../../shared/platform/tables";
import { projectSqsBatch } from "../../shared/projector/batch";
import type { ProjectorDependencies } from "../../shared/projector/core";
import type { ProjectionStores } from "../../shared/projector/registry";
import { projectionStores } from "../../shared/projector/stores";
import { ingestRecordFor, sqsEvent } from "../../tools/local/sqs-event";
import { testClients } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { fixture } from "../support/fixtures";
import { type Delivery, FIXED_HISTORIES, fixedExample, historyArbitrary } from "../support/histories";
import { projectAll, readTables, touchedKeys } from "../support/projection";

/*
 * Throttling in provisioned mode. DynamoDB Local never throttles (it has no capacity), so the
 * fault is injected: a middleware on the real DynamoDB client, in front of the SDK's retry step,
 * fails chosen calls with ProvisionedThroughputExceededException or ThrottlingException, as a
 * call looks to the projector once the SDK's own retries were throttled too. Every other call
 * reaches DynamoDB Local.
 */

const emulators = projectorOnEmulators("throttling-test");
const { dynamo, silent, tableSet, depsFor } = emulators;

/** A DynamoDB call as the injector sees it: the operation, the store, and the item (`pk|sk`) or none for a batch. */
interface Call {
  command: "GetItemCommand" | "PutItemCommand" | "BatchGetItemCommand";
  store: keyof ProjectionStores;
  item?: string;
}

/** The store whose table is `tableName`, and the `pk|sk` id of a key or item in it. */
function locate(tableName: string, key?: Record<string, AttributeValue>) {
  const definition = TABLE_DEFINITIONS.find((d) => tableName.endsWith(`-${d.id.toLowerCase()}`));
  if (!definition) throw new Error(`not a projection table: ${tableName}`);
  const plain = key ? unmarshall(key) : undefined;
  const sk = definition.sortKey ? plain?.[definition.sortKey.name] : undefined;
  return {
    store: definition.id.toLowerCase() as keyof ProjectionStores,
    item: plain ? `${plain[definition.partitionKey.name]}|${sk ?? ""}` : undefined,
  };
}

/**
 * A DynamoDB client whose calls `throttled` chooses fail as throttled (alternately with either
 * of DynamoDB's two throttling errors); every call it lets through goes to DynamoDB Local.
 * Records what it failed.
 */
function throttlingClient(throttled: (call: Call) => boolean) {
  const client: DynamoDBClient = testClients().dynamo;
  const failed: Call[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as {
        TableName?: string;
        Key?: Record<string, AttributeValue>;
        Item?: Record<string, AttributeValue>;
        RequestItems?: Record<string, unknown>;
      };
      const command = context.commandName as Call["command"];
      const tableName = input.TableName ?? Object.keys(input.RequestItems ?? {})[0] ?? "";
      const call: Call = {
        command,
        ...locate(tableName, command === "BatchGetItemCommand" ? undefined : (input.Key ?? input.Item)),
      };
      if (!throttled(call)) return next(args);
      failed.push(call);
      const options = { message: "Rate of requests exceeds the allowed throughput.", $metadata: {} };
      throw failed.length % 2
        ? new ProvisionedThroughputExceededException(options)
        : new ThrottlingException(options);
    },
    // "build" runs before the SDK's retry step: the error reaches the projector as it would
    // after every retry was throttled.
    { step: "build", name: "injectThrottling" },
  );
  return { client, failed };
}

/** The `store:pk|sk` ids of the items a delivery touches. */
function itemsOf(delivery: Delivery): string[] {
  return [...touchedKeys([delivery])].flatMap(([store, keys]) =>
    [...keys.keys()].map((id) => `${store}:${id}`),
  );
}

/**
 * Plays SQS and the event source: the records in batches of the given sizes (cycled); a record
 * reported as a batch item failure goes to the back of the queue and is delivered again.
 * Checks after every batch that it reported exactly the records touching an item whose own read
 * or write was throttled. Returns how many deliveries it took and how many calls were throttled.
 */
async function deliverUntilProjected(
  deliveries: readonly Delivery[],
  sizes: readonly number[],
  deps: ProjectorDependencies,
  failed: Call[],
): Promise<{ delivered: number; throttled: number }> {
  const byMessage = new Map<string, Delivery>();
  const queue: SQSRecord[] = deliveries.map((d) => {
    const record = ingestRecordFor(d.body, d.receivedAt);
    byMessage.set(record.messageId, d);
    return record;
  });
  let delivered = 0;
  let throttled = 0;
  for (let b = 0; queue.length > 0; b++) {
    // A bound far above what the throttling rates here need: the test fails instead of hanging.
    if (delivered > deliveries.length * 50) throw new Error("records kept failing");
    const batch = queue.splice(0, Math.max(1, sizes[b % sizes.length] ?? 1));
    delivered += batch.length;
    failed.length = 0;
    const response = await projectSqsBatch(sqsEvent(batch), undefined, deps, silent());
    throttled += failed.length;
    const reported = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    const throttledItems = new Set(failed.flatMap((c) => (c.item ? [`${c.store}:${c.item}`] : [])));
    for (const record of batch) {
      const touchesThrottled = itemsOf(byMessage.get(record.messageId) as Delivery).some((id) =>
        throttledItems.has(id),
      );
      // Only the records of a throttled item fail, and every one of them does: the others land.
      expect(reported.has(record.messageId)).toBe(touchesThrottled);
    }
    queue.push(...batch.filter((r) => reported.has(r.messageId)));
  }
  return { delivered, throttled };
}

/** A call's fate under a seed: throttled with probability `rate`, by a hash of the seed, the call and its count. */
function randomThrottling(seed: number, rate: number) {
  const seen = new Map<string, number>();
  return (call: Call) => {
    const id = `${call.command}|${call.store}|${call.item ?? ""}`;
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    const draw = createHash("sha256").update(`${seed}|${id}|${n}`).digest().readUInt32BE(0) / 2 ** 32;
    return draw < rate;
  };
}

describe("the projector under throttling (provisioned capacity)", () => {
  it("reports only the records of throttled items, redelivers them, and ends with the tables of an unthrottled run", async () => {
    let throttledCalls = 0;
    await fc.assert(
      fc.asyncProperty(
        historyArbitrary(
          fc.constant(0).map(() => `app-${randomUUID().slice(0, 8)}`),
          30,
        ),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0.05, max: 0.4, noNaN: true }),
        async ({ history, shuffled }, sizes, seed, rate) => {
          // Prepare: the expected tables, projected in order without throttling.
          const [expected, actual] = await Promise.all([tableSet(), tableSet()]);
          const reference = projectionStores(dynamo, expected);
          await projectAll(history.deliveries, depsFor(reference));
          const { client, failed } = throttlingClient(randomThrottling(seed, rate));

          // Act: every delivery (shuffled, with duplicates) until none is reported failed.
          const { delivered, throttled } = await deliverUntilProjected(
            shuffled,
            sizes,
            depsFor(projectionStores(client, actual)),
            failed,
          );

          // Assess: nothing lost, nothing applied twice.
          throttledCalls += throttled;
          expect(delivered).toBeGreaterThanOrEqual(shuffled.length);
          expect(await readTables(projectionStores(dynamo, actual), history.deliveries)).toBe(
            await readTables(reference, history.deliveries),
          );
          client.destroy();
        },
      ),
      {
        numRuns: Number(process.env.PROPERTY_RUNS ?? 10),
        examples: FIXED_HISTORIES.slice(0, 2).map((fixed) => [
          fixedExample(`app-${randomUUID().slice(0, 8)}`, fixed),
          [7, 30],
          42,
          0.3,
        ]),
      },
    );
    // The runs did meet throttling (at 5-40% of calls).
    expect(throttledCalls).toBeGreaterThan(0);
  });

  it("falls back to one read per item when a table's batched read is throttled: an item fails only on its own calls", async () => {
    // Prepare: two groups created in one batch; the groups table's BatchGetItem and every call
    // on the second group are throttled.
    const names = await tableSet();
    const app = `app-${randomUUID().slice(0, 8)}`;
    const bodies = ["guid-a", "guid-b"].map((guid) => {
      const created = fixture("group_created");
      created.appId = app;
      created.data.group.guid = guid;
      return JSON.stringify(created);
    });
    const { client } = throttlingClient(
      (call) =>
        call.store === "groups" &&
        (call.command === "BatchGetItemCommand" || call.item?.startsWith(`${app}#guid-b|`) === true),
    );
    const records = bodies.map((body, i) => ingestRecordFor(body, 1_700_000_000_000 + i));
    const deps = depsFor(projectionStores(client, names));

    // Act
    const response = await projectSqsBatch(sqsEvent(records), undefined, deps, silent());

    // Assess: the first group landed (read on its own), the second is reported for redelivery.
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1]?.messageId }]);
    const stores = projectionStores(dynamo, names);
    expect((await stores.groups.get({ pk: `${app}#guid-a` }))?.guid).toBe("guid-a");
    expect(await stores.groups.get({ pk: `${app}#guid-b` })).toBeNull();
    client.destroy();
  });
  it("does not fall back for a failure that is not throttling: every item of the table fails with it, and no item reads itself", async () => {
    // Prepare: the groups table's BatchGetItem is refused as access denied (injected, as above).
    const names = await tableSet();
    const app = `app-${randomUUID().slice(0, 8)}`;
    const records = ["guid-a", "guid-b"].map((guid, i) => {
      const created = fixture("group_created");
      created.appId = app;
      created.data.group.guid = guid;
      return ingestRecordFor(JSON.stringify(created), 1_700_000_000_000 + i);
    });
    const client: DynamoDBClient = testClients().dynamo;
    const calls: string[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        calls.push(context.commandName as string);
        if (context.commandName !== "BatchGetItemCommand") return next(args);
        const denied = new Error("User is not authorized to perform: dynamodb:BatchGetItem");
        denied.name = "AccessDeniedException";
        throw denied;
      },
      { step: "build", name: "injectAccessDenied" },
    );

    // Act
    const response = await projectSqsBatch(
      sqsEvent(records),
      undefined,
      depsFor(projectionStores(client, names)),
      silent(),
    );

    // Assess
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(
      records.map((r) => r.messageId).sort(),
    );
    expect(calls.filter((c) => c === "GetItemCommand" || c === "PutItemCommand")).toEqual([]);
    client.destroy();
  });
});
