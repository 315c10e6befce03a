import fc from "fast-check";
import { ERASABLE, FACT_KINDS, type FactSpec, UIDS, type Uid } from "../../support/writers-model/cast";
import type { OpSpec } from "../../support/writers-model/model";
import type { AppId } from "../../support/writers-model/world";

import { inFlight, type Steps } from "./in-flight";
import { Step } from "./step";

/*
 * What the writers model draws (issue #50): the operations with their weights, the steps (one
 * operation or two interleaved, a clock jump beside), the world.
 */

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
  // The queues' second chances and the stream (operations/stream.ts): modest weights.
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("queue" as const),
      facts: fc.array(fact, { minLength: 1, maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: withCrash(fc.record({ op: fc.constant("drain" as const), again: fc.boolean() })) },
  { weight: 1, arbitrary: fc.constantFrom<OpSpec>({ op: "stall" }, { op: "unpublish" }) },
  {
    weight: 1,
    arbitrary: withCrash(fc.record({ op: fc.constant("redrive" as const), stream: fc.boolean() })),
  },
  {
    weight: 1,
    arbitrary: withCrash(
      fc.record({ op: fc.constant("replayStream" as const), app: someApp, subscriber: fc.boolean() }),
    ),
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
export const step: fc.Arbitrary<Step | Steps> = fc.oneof(
  // A fact naming a user in flight when their erasure runs (in-flight.ts).
  { weight: 1, arbitrary: inFlight },
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
