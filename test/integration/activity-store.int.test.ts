import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { FIGURE_NAMES, type Figures } from "../../shared/analytics/figures";
import type { ActivityStore, DayWrite } from "../../shared/analytics/store/activity-store";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { createActivityTable } from "../../tools/local/provision";
import { testClients, uniqueName } from "../support/aws";

const { dynamo } = testClients();
const doc = documentClient(dynamo);
let table: string;

beforeAll(async () => {
  table = uniqueName("activity");
  await createActivityTable(dynamo, table);
});

const DAY = "2026-01-02";

/** A day as a run computed it: `messages` in hour 5 and the day, and that many top users. */
function dayWrite(appId: string, computedAt: number, messages: number): DayWrite {
  const figures = (n: number): Figures =>
    Object.fromEntries(FIGURE_NAMES.map((name) => [name, name === "messages" ? n : 0])) as Figures;
  return {
    appId,
    day: DAY,
    figures: figures(messages),
    hours: [
      { hour: 4, figures: figures(0) },
      { hour: 5, figures: figures(messages) },
    ],
    topGroups: [],
    topUsers: Array.from({ length: messages }, (_, i) => ({ uid: `u${i + 1}`, messages: messages - i })),
    messageKinds: { "message/text": messages },
    platforms: { ios: 2, web: 1 },
    computedAt,
    final: false,
    bytesScanned: messages,
  };
}

/**
 * The store over the real DynamoDB Local client, its first transaction held until `release`:
 * this interleaves two runs (one reads, the other commits, then the first commits) without
 * timing. The client is not mocked: every call reaches DynamoDB Local.
 */
function heldStore(): { store: ActivityStore; reachedCommit: Promise<void>; release: () => void } {
  let release = () => {};
  let reached = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const reachedCommit = new Promise<void>((r) => {
    reached = r;
  });
  let held = false;
  const client = new Proxy(doc, {
    get(target, property, receiver) {
      if (property !== "send") return Reflect.get(target, property, receiver);
      return async (command: Parameters<typeof doc.send>[0]) => {
        if (!held && command instanceof TransactWriteCommand) {
          held = true;
          reached();
          await gate;
        }
        return target.send(command);
      };
    },
  });
  return { store: dynamoActivityStore(client, table), reachedCommit, release };
}

/** Everything stored of a day. */
async function storedDay(store: ActivityStore, appId: string) {
  const day = await store.day(appId, DAY);
  return {
    figures: day?.figures,
    platforms: day?.platforms,
    computedAt: day?.computedAt,
    hours: await store.hours(appId, DAY),
    topUsers: await store.topUsers(appId, DAY, 25),
  };
}

const expectedDay = (write: DayWrite) => ({
  figures: write.figures,
  platforms: write.platforms,
  computedAt: write.computedAt,
  hours: write.hours,
  topUsers: write.topUsers,
});

describe("the activity table's replace of a day, against DynamoDB Local", () => {
  it("leaves the day as the later run computed it when a run commits between the later run's read and its write", async () => {
    // Prepare: the day as run 1 computed it (1 message, in hour 5).
    const appId = uniqueName("app");
    const store = dynamoActivityStore(doc, table);
    await store.replace(dayWrite(appId, 1, 1));
    const later = heldStore();

    // Act: run 3 reads the day and is held before its write; run 2 commits (2 messages, two top
    // users); then run 3 writes its figures, which equal run 1's in hour 5 and the top list.
    const run3 = later.store.replace(dayWrite(appId, 3, 1));
    await later.reachedCommit;
    const run2 = await store.replace(dayWrite(appId, 2, 2));
    later.release();

    // Assess: all of run 3, none of run 2 (hour 5 and the second top user were run 2's).
    expect([run2, await run3]).toEqual([true, true]);
    expect(await storedDay(store, appId)).toEqual(expectedDay(dayWrite(appId, 3, 1)));
  });

  it("ends with the day of the run computed last, whatever the order in which runs that all read first commit (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 2, max: 50 }), { minLength: 2, maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 2, maxLength: 4 }),
        async (computedAts, sizes) => {
          // Prepare: a day stored; every run reads it and is held before its write.
          const appId = uniqueName("app");
          const store = dynamoActivityStore(doc, table);
          await store.replace(dayWrite(appId, 1, 3));
          const writes = computedAts.map((at, i) => dayWrite(appId, at, sizes[i % sizes.length] ?? 0));
          const runs = writes.map((write) => {
            const held = heldStore();
            return { held, outcome: held.store.replace(write) };
          });
          await Promise.all(runs.map((r) => r.held.reachedCommit));

          // Act: released one after the other, in the order generated.
          const outcomes: boolean[] = [];
          for (const run of runs) {
            run.held.release();
            outcomes.push(await run.outcome);
          }

          // Assess
          const last = writes.reduce((a, b) => (b.computedAt > a.computedAt ? b : a));
          expect(await storedDay(store, appId)).toEqual(expectedDay(last));
          expect(outcomes[writes.indexOf(last)]).toBe(true);
        },
      ),
      { numRuns: 15 },
    );
  });
});
