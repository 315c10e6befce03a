import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import fc from "fast-check";
import { testClients } from "../../support/aws";
import { ERASABLE, FACT_KINDS, type FactSpec, UIDS, type Uid } from "../../support/writers-model/cast";
import {
  type Releaser,
  type RequestGate,
  requestGate,
  scriptedReleaser,
} from "../../support/writers-model/gate";
import { describeOp, emptyModel, type Model, type OpSpec } from "../../support/writers-model/model";
import { type AppId, openSite, type Site } from "../../support/writers-model/world";
import { figureViolations, settle } from "./figures";
import { violations } from "./invariants";
import { announce, perform, type Real } from "./operations";

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

/** The gate of the run under way: the scheduler's `act` waits on it. */
let current: RequestGate | undefined;
/** A scheduler whose every choice waits for the run to be quiet. */
export const quietScheduler = () => fc.scheduler({ act: (f) => (current ? current.act(f) : f()) });

/** One step: its operations run together (their requests interleaved by the scheduler), then the invariants. */
export class Step implements fc.AsyncCommand<Model, Real> {
  /** The operations as they ran (a forget's user resolved against what the app knows). */
  private resolved?: string;
  constructor(readonly ops: readonly OpSpec[]) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    m.log.push(`step: ${this.toString()}`);
    const ops = this.ops.map((o) => announce(m, o));
    this.resolved = ops.map(describeOp).join(" ‖ ");
    await drive(r, Promise.all(ops.map((o, i) => perform(m, r, o, i))));
    if (!m.inFlightUnknown && (await queueEmpty(r.site))) for (const d of m.delivered) d.pending = false;
    const found = await violations(m, r.site);
    if (m.collected) collect(m, found, this.resolved ?? this.toString());
    else if (found.length) throw new ModelViolation(found, m.log);
  }
  toString(): string {
    return this.ops.map(describeOp).join(" ‖ ");
  }
}

/** Keeps each violation not seen before in the run, with the step that first showed it. */
function collect(m: Model, found: readonly string[], step: string): void {
  const seen = new Set(m.collected?.map((c) => c.violation));
  for (const violation of found) if (!seen.has(violation)) m.collected?.push({ violation, step });
}

/**
 * Releases the operations' waiting requests one at a time, the scheduler choosing which, each
 * choice once the run is quiet, until every operation ended or crashed. (`scheduledModelRun`'s
 * own driver waits for a step's whole run before it releases anything the run scheduled.)
 */
async function drive(r: Real, work: Promise<unknown>): Promise<void> {
  let done = false;
  const ended = work.finally(() => {
    done = true;
  });
  // Awaited once every operation ended; observed now, so its failure is never unhandled meanwhile.
  ended.catch(() => {});
  while (!done) {
    await r.gate.quiet();
    if (done) break;
    if (r.scheduler && r.scheduler.count() > 0) await r.scheduler.waitOne();
    else await new Promise((resolve) => setImmediate(resolve));
  }
  await ended;
}

/** What the invariants found, with what the run did (printed by fast-check with its seed and path). */
export class ModelViolation extends Error {
  constructor(
    readonly found: readonly string[],
    log: readonly string[],
  ) {
    super(
      `${found.length} violation(s):\n  ${found.slice(0, 12).join("\n  ")}\nthe run:\n  ${log.join("\n  ")}`,
    );
    this.name = "ModelViolation";
  }
}

async function queueEmpty(site: Site): Promise<boolean> {
  const { sqs, destroy } = testClients();
  try {
    const out = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: site.queueUrl,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    return Object.values(out.Attributes ?? {}).every((v) => v === "0");
  } finally {
    destroy();
  }
}

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
  current = gate;
  const model = emptyModel();
  if (measuring) model.collected = [];
  const real: Real = { site, gate, scheduler };
  try {
    if ("scheduleSequence" in scheduler)
      await fc.scheduledModelRun(scheduler, () => ({ model, real }), steps);
    // A scripted releaser (a defect's fixed sequence): the steps one after another, as the model runs them.
    else for (const s of steps) if (await s.check(model)) await s.run(model, real);
    current = undefined;
    await settle(model, site);
    const found = [...(await violations(model, site)), ...(await figureViolations(model, site))];
    if (process.env.WM_DEBUG) console.error(model.log.join("\n"));
    if (model.collected) collect(model, found, "settled");
    else if (found.length) throw new ModelViolation(found, [...model.log, "settled"]);
    return model;
  } finally {
    current = undefined;
    await site.close();
  }
}

// Most facts and commands in the first app: two writers meet where the data is.
const app = fc.oneof(
  { weight: 3, arbitrary: fc.constant<AppId>("app-a") },
  { weight: 1, arbitrary: fc.constant<AppId>("app-b") },
);
const uid = fc.constantFrom<Uid>(...UIDS);
const fact: fc.Arbitrary<FactSpec> = fc
  .record({ kind: fc.constantFrom(...FACT_KINDS), app, actor: uid, peer: uid })
  .filter((f) => f.actor !== f.peer);
// One operation in eight crashes, at a drawn request of its own.
const crashAt = fc.oneof(
  { weight: 7, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 14 }) },
);
const withCrash = <T extends OpSpec>(a: fc.Arbitrary<T>) =>
  fc.tuple(a, crashAt).map(([o, at]) => (at === undefined ? o : { ...o, crashAt: at }));
const someApp = fc.option(app, { nil: undefined });

/** One operation, drawn with the weights of a day's operations: deliveries most, erasures next. */
export const operation: fc.Arbitrary<OpSpec> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("deliver" as const),
      facts: fc.array(fact, { minLength: 1, maxLength: 4 }),
      retry: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: withCrash(
      fc.record({ op: fc.constant("forget" as const), app, uid: fc.constantFrom(...ERASABLE) }),
    ),
  },
  { weight: 1, arbitrary: withCrash(fc.record({ op: fc.constant("forgetApp" as const), app })) },
  { weight: 2, arbitrary: withCrash(fc.record({ op: fc.constant("rederive" as const), app: someApp })) },
  { weight: 2, arbitrary: withCrash(fc.record({ op: fc.constant("replay" as const), app: someApp })) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("resend" as const), pick: fc.nat(50), redacted: fc.boolean() }),
  },
  { weight: 2, arbitrary: withCrash(fc.record({ op: fc.constant("rollup" as const), app: someApp })) },
  { weight: 2, arbitrary: withCrash(fc.record({ op: fc.constant("tick" as const) })) },
  {
    weight: 1,
    arbitrary: withCrash(
      fc.record({ op: fc.constant("compact" as const), fault: fc.boolean(), running: fc.boolean() }),
    ),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("ctasEnd" as const) }) },
  {
    weight: 2,
    arbitrary: withCrash(
      fc.record({
        op: fc.constant("import" as const),
        app,
        uids: fc.subarray([...UIDS], { minLength: 1, maxLength: 3 }),
        createdDaysAgo: fc.constantFrom(0, 2_000),
        fold: fc.boolean(),
      }),
    ),
  },
  { weight: 1, arbitrary: withCrash(fc.record({ op: fc.constant("sweep" as const) })) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("rotate" as const),
      apps: fc.constantFrom<AppId[]>(["app-a"], ["app-b"], ["app-a", "app-b"]),
      fault: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("advance" as const),
      hours: fc.constantFrom(6, 26, 120, 648, 800),
    }),
  },
);

/** A step: one operation, or two that interleave (one of them possibly the clock jumping past the lease's lapse). */
export const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: operation.map((o) => new Step([o])) },
  { weight: 2, arbitrary: fc.tuple(operation, operation).map((ops) => new Step(ops)) },
  { weight: 1, arbitrary: operation.map((o) => new Step([o, { op: "lapse" }])) },
  { weight: 1, arbitrary: fc.tuple(operation, operation).map((ops) => new Step([...ops, { op: "lapse" }])) },
  // Two rotations at once (the "two at once"), each of one app's credential.
  {
    weight: 1,
    arbitrary: fc.boolean().map(
      (fault) =>
        new Step([
          { op: "rotate", apps: ["app-a"], fault },
          { op: "rotate", apps: ["app-b"], fault: false },
        ]),
    ),
  },
);

/** A run's world: the seed of its ids, and whether its compactor is Athena's (a double) or DuckDB's. */
export const world = fc.record({ seed: fc.nat(), athena: fc.boolean() });

/** The drawn model: `PROPERTY_RUNS` runs of at most `MAX_STEPS` steps (seed and path printed on a failure). */
export async function assertDrawnModel(
  parameters: fc.Parameters<
    [fc.Scheduler, Iterable<fc.AsyncCommand<Model, Real, boolean>>, { seed: number; athena: boolean }]
  > = {},
) {
  await fc.assert(
    fc.asyncProperty(
      quietScheduler(),
      fc.commands([step], { maxCommands: MAX_STEPS, size: "max" }),
      world,
      (s, steps, w) => runModel(s, steps, w.seed, { athena: w.athena }).then(() => undefined),
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
