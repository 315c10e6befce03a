import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chooseSeed, DEFAULT_SEED, defaultSimulationApps } from "../../tools/simulate/seed-choice";

// Issue #42, item 10: the docs' `simulate --connect` after the quick start reused seed 7, whose
// ids the stack already held, and its check failed (`check: 8 difference(s)`: the sessions held
// both runs' stints). A run's seed and apps: a fresh seed when none was asked for, a note otherwise.

const holding =
  (...apps: string[]) =>
  (app: string) =>
    apps.includes(app);

describe("the seed and apps of a simulation", () => {
  it("on a fresh stack: the default seed and its two apps, nothing to say", () => {
    expect(chooseSeed({ seed: DEFAULT_SEED, seedGiven: false, hasEvents: () => false })).toEqual({
      seed: 7,
      apps: ["sim-s7-a1", "sim-s7-a2"],
    });
  });

  it("after the quick start (seed 7 sent): the next seed whose apps hold nothing, and says so", () => {
    const choice = chooseSeed({
      seed: DEFAULT_SEED,
      seedGiven: false,
      hasEvents: holding("sim-s7-a1", "sim-s7-a2", "sim-s8-a2"),
    });
    expect(choice).toMatchObject({ seed: 9, apps: ["sim-s9-a1", "sim-s9-a2"] });
    expect(choice.note).toContain("seed 7's apps (sim-s7-a1, sim-s7-a2) already hold events");
    expect(choice.note).toContain("simulating seed 9 instead");
    expect(choice.note).toContain("--seed 7 sends seed 7 again");
  });

  it("a seed or apps asked for are kept, with a note that the check will show the earlier run", () => {
    const seeded = chooseSeed({ seed: 7, seedGiven: true, hasEvents: holding("sim-s7-a1") });
    expect(seeded).toMatchObject({ seed: 7, apps: ["sim-s7-a1", "sim-s7-a2"] });
    expect(seeded.note).toMatch(/^sim-s7-a1 already holds events in this stack .*differences/);
    const named = chooseSeed({ seed: 7, seedGiven: false, apps: ["mine"], hasEvents: holding("mine") });
    expect(named).toMatchObject({ seed: 7, apps: ["mine"] });
    expect(named.note).toContain("mine already holds events");
  });

  it("a check-only run checks the history it names, whatever the stack holds", () => {
    expect(chooseSeed({ seed: 7, seedGiven: false, checkOnly: true, hasEvents: () => true })).toEqual({
      seed: 7,
      apps: ["sim-s7-a1", "sim-s7-a2"],
    });
  });

  it("without --seed and --apps, the apps run never held events, for any apps the stack holds (fast-check)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 7, max: 40 }), { maxLength: 30 }), (sent) => {
        const held = new Set(sent.flatMap(defaultSimulationApps));
        const choice = chooseSeed({ seed: 7, seedGiven: false, hasEvents: (app) => held.has(app) });
        expect(choice.apps.some((app) => held.has(app))).toBe(false);
        expect(choice.apps).toEqual(defaultSimulationApps(choice.seed));
        expect(Boolean(choice.note)).toBe(choice.seed !== 7);
      }),
    );
  });
});
