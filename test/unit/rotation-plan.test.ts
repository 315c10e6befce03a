import { describe, expect, it } from "vitest";
import { planRotation } from "../../shared/apps/rotate";

// The plan of a rotation from what the store holds (#40 item 8): which credentials, their new
// ones, and the apps of each. The rotation itself runs against the emulators (e2e/rotation).

const any = { username: "any", password: "p-any" };
const a = { username: "pair-a", password: "p-a", appIds: ["a1", "a2"] };
const b = { username: "pair-b", password: "p-b", appIds: ["b1"] };
const apps = [
  { appId: "x1", triggers: ["message_sent"], username: "any" },
  { appId: "a1", triggers: ["message_sent"], username: "pair-a" },
  { appId: "b1", triggers: ["message_sent"], username: "pair-b" },
];
const fresh = (old: { username: string }) => ({ username: `${old.username}-new`, password: "new-password" });

describe("planning a rotation", () => {
  it("rotates every credential by default, each new one keeping its appIds, with the apps that deliver with it", () => {
    const plans = planRotation([any, a, b], apps, undefined, fresh);
    expect(plans.map((p) => [p.old.username, p.next, p.apps.map((x) => x.appId), p.unconnected])).toEqual([
      ["any", { username: "any-new", password: "new-password", replaces: "any" }, ["x1"], []],
      [
        "pair-a",
        { username: "pair-a-new", password: "new-password", appIds: ["a1", "a2"], replaces: "pair-a" },
        ["a1"],
        ["a2"],
      ],
      [
        "pair-b",
        { username: "pair-b-new", password: "new-password", appIds: ["b1"], replaces: "pair-b" },
        ["b1"],
        [],
      ],
    ]);
  });

  it("rotates only those named, and resumes one left half-way with the credential it added, its apps on either", () => {
    const added = { username: "pair-a-2", password: "p-a-2", appIds: ["a1", "a2"], replaces: "pair-a" };
    const moved = [...apps, { appId: "a2", triggers: ["message_sent"], username: "pair-a-2" }];
    const plans = planRotation([any, a, b, added], moved, ["pair-a"], fresh);
    expect(
      plans.map((p) => [p.old.username, p.next.username, p.resumed, p.apps.map((x) => x.appId)]),
    ).toEqual([["pair-a", "pair-a-2", true, ["a1", "a2"]]]);
  });

  it("refuses a credential the store does not hold, and the new one of a rotation under way", () => {
    const added = { username: "pair-a-2", password: "p-a-2", replaces: "pair-a" };
    expect(() => planRotation([any, a], apps, ["nobody"], fresh)).toThrow(
      "the credential store holds no nobody (it holds any, pair-a)",
    );
    expect(() => planRotation([any, a, added], apps, ["pair-a-2"], fresh)).toThrow(
      "pair-a-2 is the new credential of a rotation of pair-a left half-way: name pair-a to finish it",
    );
    expect(() => planRotation([any], apps, undefined, () => any)).toThrow(/already in the store/);
    expect(() => planRotation([], apps, undefined, fresh)).toThrow("the credential store is empty");
  });
});
