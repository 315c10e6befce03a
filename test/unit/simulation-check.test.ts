import { describe, expect, it } from "vitest";
import { checkTables, type TableChecks } from "../../tools/simulate/check";
import { simulatedHistory } from "../support/histories";
import { memoryChecks, memoryDeps, memoryStores, projectAll } from "../support/projection";

// The simulator's check reads its items side by side (#42, item 11: a simulation's check read a
// thousand items one after the other); its differences still come in the history's order.

/** The same reads, each answered after a delay that differs from read to read (the later, the sooner). */
function jittered(checks: TableChecks): TableChecks {
  let n = 0;
  const later =
    <A extends unknown[], R>(read: (...args: A) => Promise<R>) =>
    async (...args: A) => {
      const answer = await read(...args);
      await new Promise((r) => setTimeout(r, 20 - (n++ % 20)));
      return answer;
    };
  return {
    group: later(checks.group),
    members: later(checks.members),
    groupsOf: later(checks.groupsOf),
    online: later(checks.online),
    session: later(checks.session),
  };
}

describe("the simulator's check of the tables", () => {
  const history = simulatedHistory("check-app", 11, 120);
  const expected = history.generated.expected.get("check-app");

  it("finds every item of a projected history, reading side by side", async () => {
    const stores = memoryStores();
    await projectAll(history.deliveries, memoryDeps(stores));
    expect(
      await checkTables(history.generated, jittered(memoryChecks(stores)), { recordings: false }),
    ).toEqual([]);
  });

  it("reports what is missing in the history's order: its groups, who should be online, its sessions", async () => {
    const problems = await checkTables(history.generated, jittered(memoryChecks(memoryStores())), {
      recordings: false,
    });
    expect(problems).toEqual([
      ...[...(expected?.groups.keys() ?? [])].map((guid) => `check-app group ${guid}: missing`),
      ...[...(expected?.online ?? [])].map((uid) => `check-app: ${uid} should be online`),
      ...[...(expected?.sessions.keys() ?? [])].map((id) => `check-app session ${id}: missing`),
    ]);
    expect(problems.length).toBeGreaterThan(3);
  });
});
