import fc from "fast-check";
import { ERASABLE, FACT_KINDS, type FactSpec, UIDS, type Uid } from "../../support/writers-model/cast";
import type { Model, OpSpec } from "../../support/writers-model/model";
import type { AppId } from "../../support/writers-model/world";
import { step } from "./arbitraries";
import type { Real } from "./operations";
import { Step } from "./step";

/*
 * Where the drawn runs meet (issue #50, "show it can fail"): most of the issue's defects need
 * several particular steps about the same user, in order (an import of them, then their facts days
 * later, then the sweep that crosses the window; a compaction whose marker S3 refused, then a
 * rewrite of the day; an import left unfolded, then a forget of them). Operations drawn
 * independently over five users and two apps met so rarely that 200 drawn runs found defects 4, 8,
 * 9 and 10 in none. So a run draws a focus: one erasable user and one app that most of its facts,
 * imports and forgets concern, and a theme, which of the families of writers it dwells on; its
 * steps are the model's own (`arbitraries.ts`'s `step`, every operation) mixed with the theme's
 * steps about the focus. No step is a defect's sequence: each is one operation, or the clock
 * moving then one operation ("days later"), or two or three at once, and the theme only weights
 * what is drawn; the order and the interleaving are the scheduler's and fast-check's.
 */

/** The families a run dwells on. */
export const THEMES = ["erasure", "retention", "lease", "athena", "rotation"] as const;
export type Theme = (typeof THEMES)[number];

/** A run's focus: the user and app most of it concerns, and its theme. */
export interface Focus {
  theme: Theme;
  uid: Uid;
  app: AppId;
}

/** Who looks like each erasable user: the uid it prefixes or that prefixes it, a namesake. */
const LOOKALIKE: Record<Uid, Uid> = {
  john: "john_doe",
  john_doe: "john",
  sam: "sam_b",
  sam_b: "sam",
  carol: "carol",
};

// The themes whose defects need the longest sequences are drawn more often.
const focusArbitrary: fc.Arbitrary<Focus> = fc.record({
  theme: fc.oneof(
    { weight: 1, arbitrary: fc.constant<Theme>("erasure") },
    { weight: 2, arbitrary: fc.constant<Theme>("retention") },
    { weight: 2, arbitrary: fc.constant<Theme>("lease") },
    { weight: 2, arbitrary: fc.constant<Theme>("athena") },
    { weight: 1, arbitrary: fc.constant<Theme>("rotation") },
  ),
  uid: fc.constantFrom(...ERASABLE),
  app: fc.constantFrom<AppId>("app-a", "app-b"),
});

/** A fact about the focus user in the focus app (mostly), or between their lookalike and another. */
function factOf(f: Focus): fc.Arbitrary<FactSpec> {
  const others = UIDS.filter((u) => u !== f.uid);
  const kind = fc.constantFrom(...FACT_KINDS);
  const theirs = fc
    .record({ kind, other: fc.constantFrom(...others), towards: fc.boolean() })
    .map(({ kind: k, other, towards }) => ({
      kind: k,
      app: f.app,
      actor: towards ? other : f.uid,
      peer: towards ? f.uid : other,
    }));
  const lookalike = fc
    .record({ kind, other: fc.constantFrom(...others) })
    .filter(({ other }) => other !== LOOKALIKE[f.uid])
    .map(({ kind: k, other }) => ({ kind: k, app: f.app, actor: LOOKALIKE[f.uid], peer: other }));
  return fc.oneof({ weight: 3, arbitrary: theirs }, { weight: 1, arbitrary: lookalike });
}

/** The focus's operations, each drawn with what it may vary. */
function focusOps(f: Focus) {
  const others = UIDS.filter((u) => u !== f.uid);
  const deliver = fc.record({
    op: fc.constant("deliver" as const),
    facts: fc.array(factOf(f), { minLength: 1, maxLength: 3 }),
    retry: fc.boolean(),
  });
  const forget: fc.Arbitrary<OpSpec> = fc.constant({ op: "forget", app: f.app, uid: f.uid });
  /** An import of the focus user (with others, maybe), created long ago or that day. */
  const importThem = (fold: fc.Arbitrary<boolean>, createdDaysAgo: fc.Arbitrary<number>) =>
    fc.record({
      op: fc.constant("import" as const),
      app: fc.constant(f.app),
      uids: fc.subarray(others, { maxLength: 2 }).map((u) => [f.uid, ...u]),
      createdDaysAgo,
      fold,
    });
  /** An import of others only, folded (the day's object, which their later batch folds into). */
  const importOthers = fc.record({
    op: fc.constant("import" as const),
    app: fc.constant(f.app),
    uids: fc.subarray(others, { minLength: 1, maxLength: 2 }),
    createdDaysAgo: fc.constantFrom(0, 2_000),
    fold: fc.constant(true),
  });
  const later = (o: fc.Arbitrary<OpSpec>) =>
    fc.tuple(fc.constantFrom(26, 120), o).map(([laterHours, op]) => new Step([{ ...op, laterHours }]));
  const one = (o: fc.Arbitrary<OpSpec>) => o.map((op) => new Step([op]));
  const rollup = fc.oneof(
    fc.constant<OpSpec>({ op: "rollup", app: f.app }),
    fc.constant<OpSpec>({ op: "rollup" }),
    fc.constant<OpSpec>({ op: "tick" }),
  );
  return { deliver, forget, importThem, importOthers, later, one, rollup };
}

/** The theme's steps about the focus, with their weights (beside the model's own steps). */
function themedSteps(f: Focus): Array<fc.WeightedArbitrary<Step>> {
  const { deliver, forget, importThem, importOthers, later, one, rollup } = focusOps(f);
  switch (f.theme) {
    // Their facts, their erasure, and the rewriters after it (rederive, replay, resend).
    case "erasure":
      return [
        { weight: 3, arbitrary: one(deliver) },
        { weight: 3, arbitrary: one(forget) },
        { weight: 1, arbitrary: one(fc.constant<OpSpec>({ op: "rederive" })) },
        { weight: 1, arbitrary: one(fc.constant<OpSpec>({ op: "replay", app: f.app })) },
        {
          weight: 1,
          arbitrary: one(
            fc.record({ op: fc.constant("resend" as const), pick: fc.nat(50), redacted: fc.constant(true) }),
          ),
        },
        { weight: 1, arbitrary: one(rollup) },
      ];
    // Imported (created long ago), active days later, a month passing (the schedule's passes, the
    // window crossed, the sweep).
    case "retention":
      return [
        {
          weight: 3,
          arbitrary: one(
            importThem(
              fc.oneof(
                { weight: 1, arbitrary: fc.constant(true) },
                { weight: 2, arbitrary: fc.constant(false) },
              ),
              fc.constant(2_000),
            ),
          ),
        },
        { weight: 3, arbitrary: later(deliver) },
        { weight: 3, arbitrary: one(fc.constant<OpSpec>({ op: "expire" })) },
        { weight: 1, arbitrary: later(rollup) },
        // Their erasure: the import records it must rewrite (the batch left unfolded, its key).
        { weight: 2, arbitrary: one(forget) },
      ];
    // Imports of the day (folded, and theirs left as a batch), and their forget beside another
    // holder of the archive lease, the clock jumping past the lease's lapse.
    case "lease":
      return [
        { weight: 2, arbitrary: one(importOthers) },
        { weight: 2, arbitrary: one(importThem(fc.constant(false), fc.constant(0))) },
        // Their erasure alone too (beside the lapse, the lease is often lost and the erasure stops).
        { weight: 2, arbitrary: one(forget) },
        // Two imports at once: others' (folded) beside theirs (left as a batch).
        {
          weight: 2,
          arbitrary: fc
            .tuple(importOthers, importThem(fc.constant(false), fc.constant(0)))
            .map((ops) => new Step(ops)),
        },
        {
          weight: 3,
          arbitrary: fc
            .oneof(
              { weight: 3, arbitrary: importOthers },
              {
                weight: 1,
                arbitrary: fc.constantFrom<OpSpec>({ op: "compact" }, { op: "rederive" }, { op: "sweep" }),
              },
            )
            .chain((holder) =>
              // The clock jumps at a drawn moment of the step: mid-search, mid-rewrite.
              fc
                .integer({ min: 4, max: 28 })
                .map(
                  (after) =>
                    new Step([{ op: "forget", app: f.app, uid: f.uid }, holder, { op: "lapse", after }]),
                ),
            ),
        },
        { weight: 1, arbitrary: one(deliver) },
      ];
    // Rotations, two at once or one whose ingest answers 503, and deliveries with the credentials.
    case "rotation":
      return [
        {
          weight: 3,
          arbitrary: fc.boolean().map(
            (fault) =>
              new Step([
                { op: "rotate", apps: [f.app], fault },
                { op: "rotate", apps: [f.app === "app-a" ? "app-b" : "app-a"], fault: false },
              ]),
          ),
        },
        {
          weight: 2,
          arbitrary: fc
            .constantFrom<AppId[]>([f.app], ["app-a", "app-b"])
            .map((apps) => new Step([{ op: "rotate", apps, fault: true }])),
        },
        { weight: 1, arbitrary: one(deliver) },
      ];
    // Their facts on a closed day, a compaction whose marker S3 refuses and whose CTAS runs on,
    // then a rewrite of the day (their forget, a rederive).
    case "athena":
      return [
        { weight: 2, arbitrary: one(deliver) },
        {
          weight: 2,
          arbitrary: later(
            fc
              .record({
                fault: fc.oneof(
                  { weight: 3, arbitrary: fc.constant(true) },
                  { weight: 1, arbitrary: fc.constant(false) },
                ),
                running: fc.constant(true),
              })
              .map((c): OpSpec => ({ op: "compact", ...c })),
          ),
        },
        { weight: 2, arbitrary: one(forget) },
        { weight: 1, arbitrary: one(fc.constantFrom<OpSpec>({ op: "rederive" }, { op: "ctasEnd" })) },
      ];
  }
}

/**
 * What the app has before the run's writers meet, by theme: a retention run's app imported its
 * users when it started (the focus among them, created long ago, the batch folded or not), as an
 * operator does once when connecting an app; the other themes start empty. The import is a step of
 * the run (its invariants checked after it), drawn as any other.
 */
function prelude(f: Focus): fc.Arbitrary<Step[]> {
  if (f.theme !== "retention") return fc.constant([]);
  const { importThem } = focusOps(f);
  return importThem(fc.boolean(), fc.constant(2_000)).map((op) => [new Step([op])]);
}

/**
 * A drawn run: its focus, its prelude (`prelude`), and four to `maxCommands` steps, each the model's own (`step`) or one
 * of the theme's about the focus. The focus shrinks first (to the erasure theme, john, app-a), then
 * the steps as `fc.commands` shrinks them.
 */
export function focusedRun(
  maxCommands: number,
): fc.Arbitrary<{ focus: Focus; steps: Iterable<fc.AsyncCommand<Model, Real>> }> {
  // At least four steps: the theme's sequences are two or three steps long, among others.
  const least = Math.min(4, maxCommands);
  return focusArbitrary.chain((focus) =>
    fc
      .tuple(
        prelude(focus),
        fc
          .commands([fc.oneof({ weight: 1, arbitrary: step }, ...themedSteps(focus))], {
            maxCommands,
            size: "max",
          })
          .filter((steps) => [...steps].length >= least),
      )
      .map(([first, steps]) => ({ focus, steps: [...first, ...steps] })),
  );
}
