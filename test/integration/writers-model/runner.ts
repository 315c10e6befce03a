import fc from "fast-check";
import { type Releaser, requestGate, scriptedReleaser } from "../../support/writers-model/gate";
import { emptyModel, type Model, type OpSpec } from "../../support/writers-model/model";
import { openSite } from "../../support/writers-model/world";
import { world } from "./arbitraries";
import { figureViolations, settle } from "./figures";
import { type Focus, focusedRun } from "./focus";
import { violations } from "./invariants";
import type { Real } from "./operations";
import { collect, ModelViolation, quietScheduler, runUnderWay, Step } from "./step";

/*
 * The writers model's runner (issue #50): `fc.commands` of steps, each one operation or two that
 * interleave, run by `fc.scheduledModelRun` over a world of their own; the scheduler releases one
 * SDK request (or engine query) at a time, once the system is quiet (`gate.ts`), so a seed and a
 * path replay the same interleaving. After each step the invariants (`invariants.ts`); at the end
 * the run settles and the figures are compared with the model's (`figures.ts`).
 */

/** Drawn runs: `PROPERTY_RUNS` (default 5, the suite's), each of at most `MODEL_MAX_STEPS` steps (8). */
export const PROPERTY_RUNS = Number(process.env.PROPERTY_RUNS ?? 5);
export const MAX_STEPS = Number(process.env.MODEL_MAX_STEPS ?? 8);

/** The seed of the suite's drawn runs (a long run draws its own; PROPERTY_SEED replays one). */
export const SUITE_SEED = 50;

/**
 * Runs steps over a fresh world (ids from `seed`) under `scheduler`; settles; checks the figures.
 * Throws `ModelViolation` at the first step whose invariants fail.
 */
export async function runModel(
  scheduler: fc.Scheduler | Releaser,
  steps: Iterable<fc.AsyncCommand<Model, Real>>,
  seed: number,
  { measuring = false, athena = false } = {},
): Promise<Model> {
  const site = await openSite(seed, { athena });
  const gate = requestGate(() => scheduler);
  runUnderWay(gate);
  const model = emptyModel();
  if (measuring) model.collected = [];
  const real: Real = { site, gate, scheduler };
  try {
    if ("scheduleSequence" in scheduler)
      await fc.scheduledModelRun(scheduler, () => ({ model, real }), steps);
    // A scripted releaser (a defect's fixed sequence): the steps one after another, as the model runs them.
    else for (const s of steps) if (await s.check(model)) await s.run(model, real);
    runUnderWay(undefined);
    await settle(model, site);
    const found = [...(await violations(model, site)), ...(await figureViolations(model, site))];
    if (process.env.WM_DEBUG) console.error(model.log.join("\n"));
    if (model.collected) collect(model, found, "settled");
    else if (found.length) throw new ModelViolation(found, [...model.log, "settled"]);
    return model;
  } finally {
    runUnderWay(undefined);
    await site.close();
  }
}

/** The drawn model: `PROPERTY_RUNS` runs of at most `MAX_STEPS` steps (seed and path printed on a failure). */
export async function assertDrawnModel(
  parameters: fc.Parameters<
    [
      fc.Scheduler,
      { focus: Focus; steps: Iterable<fc.AsyncCommand<Model, Real>> },
      { seed: number; athena: boolean },
    ]
  > = {},
) {
  await fc.assert(
    fc.asyncProperty(quietScheduler(), focusedRun(MAX_STEPS), world, (s, run, w) =>
      runModel(s, run.steps, w.seed, { athena: athenaOf(run.focus, w) }).then(() => undefined),
    ),
    {
      numRuns: PROPERTY_RUNS,
      endOnFailure: true,
      // The suite's runs are always the same (SUITE_SEED); a long run (PROPERTY_RUNS) draws anew.
      ...(process.env.PROPERTY_SEED || !process.env.PROPERTY_RUNS
        ? { seed: Number(process.env.PROPERTY_SEED ?? SUITE_SEED) }
        : {}),
      ...(process.env.PROPERTY_PATH ? { path: process.env.PROPERTY_PATH } : {}),
      ...parameters,
    },
  );
}

/** Whether a drawn run's compactor is Athena's: its world's draw, or its theme (Athena's writers). */
export const athenaOf = (focus: Focus, w: { athena: boolean }) => w.athena || focus.theme === "athena";

/**
 * A fixed sequence (a defect's): its steps over a fresh world, released by `releaser` (the oldest
 * request first unless a script says otherwise); the violations found, none when it keeps every
 * invariant.
 */
export async function fixedSequenceViolations(
  steps: readonly OpSpec[][],
  releaser: Releaser = scriptedReleaser(),
  { seed = 50, athena = false }: { seed?: number; athena?: boolean } = {},
): Promise<readonly string[]> {
  try {
    await runModel(
      releaser,
      steps.map((ops) => new Step(ops)),
      seed,
      { athena },
    );
    return [];
  } catch (error) {
    if (error instanceof ModelViolation) return error.found;
    throw error;
  }
}
