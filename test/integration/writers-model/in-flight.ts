import fc from "fast-check";
import { ERASABLE, FACT_KINDS, type FactKind, type FactSpec, UIDS } from "../../support/writers-model/cast";
import type { Model, OpSpec } from "../../support/writers-model/model";
import type { AppId } from "../../support/writers-model/world";
import type { Real } from "./operations";
import { Step } from "./step";

/*
 * Facts in flight during an erasure, drawn as one command of the writers model (issue #50): a
 * delivery naming a user is acknowledged and left queued, then meets `forget` of that user while
 * it is still queued (projected after the erasure), in a batch under way (the drain interleaved
 * with the erasure), dead-lettered and redriven after it, or kept unpublished and redriven to the
 * stream after it; or the archive replayed to the stream beside the erasure. Each part is a step
 * of its own (its invariants checked after it): two to four steps, beside the run's eight.
 */

/** Steps run one after another, as one command (a drawn sequence the model must meet whole). */
export class Steps implements fc.AsyncCommand<Model, Real> {
  constructor(readonly steps: readonly Step[]) {}
  check = () => true;
  async run(m: Model, r: Real): Promise<void> {
    for (const s of this.steps) await s.run(m, r);
  }
  toString(): string {
    return this.steps.map(String).join(" ; ");
  }
}

/** How the fact in flight meets the erasure. */
const WAYS = ["queued", "batch", "dead-lettered", "unpublished", "replayed"] as const;
type Way = (typeof WAYS)[number];

/** The steps of one way, for a fact whose actor is erased (a refused join's: its member, the peer). */
export function inFlightSteps(way: Way, fact: FactSpec): OpSpec[][] {
  const forget: OpSpec = {
    op: "forget",
    app: fact.app,
    uid: fact.kind === "refusedJoin" ? fact.peer : fact.actor,
  };
  const queue: OpSpec = { op: "queue", facts: [fact] };
  switch (way) {
    // Projected by the next drawn step that drains, or when the run settles.
    case "queued":
      return [[queue], [forget]];
    case "batch":
      return [[queue], [forget, { op: "drain" }]];
    case "dead-lettered":
      return [[queue], [{ op: "stall" }], [forget], [{ op: "redrive", stream: false }]];
    case "unpublished":
      return [[queue], [{ op: "unpublish" }], [forget], [{ op: "redrive", stream: true }]];
    case "replayed":
      return [
        [{ op: "deliver", facts: [fact], retry: false }],
        [forget, { op: "replayStream", subscriber: false }],
      ];
  }
}

/** A fact naming an erasable user in flight when their erasure runs, one way or another. */
export const inFlight: fc.Arbitrary<Steps> = fc
  .record({
    way: fc.constantFrom(...WAYS),
    // A join the projector refuses too: redacted in flight, it must stay refused.
    kind: fc.constantFrom<FactKind>(...FACT_KINDS, "refusedJoin"),
    app: fc.constantFrom<AppId>("app-a", "app-a", "app-b"),
    actor: fc.constantFrom(...ERASABLE),
    peer: fc.constantFrom(...UIDS),
  })
  .filter((f) => f.actor !== f.peer)
  // A refused join's erased user is its member (the peer).
  .map(({ way, ...f }) => ({
    way,
    ...f,
    ...(f.kind === "refusedJoin" ? { actor: f.peer, peer: f.actor } : {}),
  }))
  .map(({ way, ...fact }) => new Steps(inFlightSteps(way, fact).map((ops) => new Step(ops))));
