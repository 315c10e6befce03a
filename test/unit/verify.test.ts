import { describe, expect, it } from "vitest";
import type { EventTrace } from "../../tools/ops/trace";
import { type VerifyDependencies, verifyDeployment, verifyLines } from "../../tools/ops/verify";

/** A deployment where every step holds, each dependency replaceable to make one fail. */
function working(overrides: Partial<VerifyDependencies> = {}): VerifyDependencies {
  let clock = Date.UTC(2026, 0, 2, 12);
  const projected: EventTrace = {
    eventId: "e1",
    outcome: "projected",
    key: "raw/date=2026-01-02/hour=12/b.ndjson.gz",
    items: [{ table: "groups", key: { pk: "app#g" } as never, state: "includes it" }],
  };
  return {
    deliver: async () => "e1",
    trace: async () => projected,
    received: async () => ["e1@1767355200000"],
    rollup: async () => undefined,
    groupsCreated: async () => 1,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    waitMs: 5_000,
    pollMs: 1_000,
    ...overrides,
  };
}

describe("verifyDeployment: the steps of webhook verify", () => {
  it("holds when every step holds", async () => {
    const report = await verifyDeployment(working(), "webhook-verify");
    expect(report.ok).toBe(true);
    expect(verifyLines(report).at(-1)).toBe(
      "verified: one delivery of webhook-verify went through the whole pipeline",
    );
  });

  it("keeps its lines within 100 columns, a long detail wrapped under its step (#61)", async () => {
    const report = await verifyDeployment(working(), "webhook-verify");
    const long = {
      ...report,
      steps: [
        {
          step: "table row" as const,
          ok: true,
          detail: `groups ${'{"pk": "webhook-verify#verify-0123456789abcdef", "sk": "g"}'.repeat(2)}: present`,
        },
        ...report.steps,
      ],
    };
    const lines = verifyLines(long);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(lines[0]).toMatch(/^ok {4}table row {7}groups /);
    expect(lines[1]).toMatch(/^ {22}\S/);
  });

  it("fails the stream step alone when no envelope of the delivery arrives in time, and says so", async () => {
    const report = await verifyDeployment(working({ received: async () => ["other@1"] }), "webhook-verify");
    expect(report.steps.filter((s) => !s.ok).map((s) => `${s.step}: ${s.detail}`)).toEqual([
      "stream message: not received within 5 s (1 others)",
    ]);
    expect(verifyLines(report).at(-1)).toMatch(/^not verified: stream message failed/);
  });

  it("stops at a refused delivery, and fails a figure the rollup did not write", async () => {
    const refused = await verifyDeployment(
      working({
        deliver: async () => {
          throw new Error("http://x/webhook answered 401 {}");
        },
      }),
      "a",
    );
    expect(refused.steps).toEqual([
      { step: "delivered", ok: false, detail: "http://x/webhook answered 401 {}" },
    ]);
    const unfigured = await verifyDeployment(working({ groupsCreated: async () => undefined }), "a");
    expect(unfigured.steps.at(-1)).toMatchObject({ step: "figure", ok: false });
  });
});
