import { describe, expect, it } from "vitest";
import { projectBatch } from "../../shared/projector/core";
import { projectionStores } from "../../shared/projector/stores";
import { projectorOnEmulators } from "../support/emulator-projector";
import { APP, busyGroupHistory, GUID } from "../support/hot-groups";

/**
 * A busy group (#57, item 1) on DynamoDB Local: each delivery in a batch of its own, as live
 * traffic brings them, so every step is a read and a conditional write of the stored item: the
 * ids it remembers (`known`) go through DynamoDB and back, and the retry received last is
 * recognised from them.
 */
const env = projectorOnEmulators("hot-groups");

describe("a busy group on DynamoDB Local (#57)", () => {
  it("eight joins, the first retried 10 s later and received last: 9 members, the retry stale", async () => {
    // Prepare
    const tables = await env.tableSet();
    const stores = projectionStores(env.dynamo, tables);
    const projector = env.depsFor(stores);
    const { received, expected } = busyGroupHistory();

    // Act
    const outcomes: unknown[] = [];
    for (const [i, d] of received.entries())
      outcomes.push(
        ...(await projectBatch(
          [{ ...d, messageId: `m${i}`, trigger: "group_member_joined", appId: APP }],
          projector,
        )),
      );

    // Assess
    const group = (await stores.groups.get({ pk: `${APP}#${GUID}` })) as Record<string, unknown> | null;
    expect([group?.membersCount, group?.updatedAt]).toEqual(expected);
    expect(Object.values((group?.known ?? {}) as Record<string, string>).join("")).toHaveLength(8);
    expect(outcomes.at(-1)).toEqual({ outcome: "stale" });
  });
});
