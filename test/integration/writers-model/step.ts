import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import fc from "fast-check";
import { testClients } from "../../support/aws";
import type { RequestGate } from "../../support/writers-model/gate";
import { describeOp, type Model, type OpSpec } from "../../support/writers-model/model";
import type { Site } from "../../support/writers-model/world";
import { violations } from "./invariants";
import { announce, perform, type Real } from "./operations";

/*
 * A step of the writers model (issue #50): its operations run together, their requests released
 * one at a time by the scheduler once the run is quiet; then the invariants.
 */

/** The gate of the run under way: the scheduler's `act` waits on it. */
let current: RequestGate | undefined;
/** Sets the gate of the run under way (none between runs). */
export function runUnderWay(gate: RequestGate | undefined): void {
  current = gate;
}
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
export function collect(m: Model, found: readonly string[], step: string): void {
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

/** The events queue and its dead letters hold nothing: every acknowledged delivery is through the projector. */
async function queueEmpty(site: Site): Promise<boolean> {
  const { sqs, destroy } = testClients();
  try {
    for (const url of [site.queueUrl, site.stream.deadLetterUrl]) {
      const out = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: url,
          AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        }),
      );
      if (!Object.values(out.Attributes ?? {}).every((v) => v === "0")) return false;
    }
    return true;
  } finally {
    destroy();
  }
}
