import { daysInRange } from "../../../../shared/analytics/rollup";
import { utcDay } from "../../../../shared/contracts/bucket-layout";
import { eventIdOf, type FactSpec, factBodies } from "../../../support/writers-model/cast";
import { drainEvents, post, type Wiring } from "../../../support/writers-model/cores";
import { deliverable, type Model, type OpSpec } from "../../../support/writers-model/model";
import { webhookPair } from "../../../support/writers-model/world";

/** The days the facts were received on, to today. */
export function factDays(m: Model, now: number): string[] {
  const first = m.delivered.reduce((min, d) => Math.min(min, d.receivedAt), now);
  return daysInRange(utcDay(first), utcDay(now));
}

/** The platform delivers the facts (each body once, or with a retry of it), then the projector drains the queue. */
export async function deliver(m: Model, w: Wiring, o: Extract<OpSpec, { op: "deliver" }>): Promise<string> {
  const acked = await acknowledge(m, w, o);
  const drained = await drainEvents(w);
  return `${acked} acknowledged, ${drained.handled} handled, ${drained.failed} failed`;
}

/** The platform delivers the facts (each body once, or with a retry of it): how many the ingest acknowledged (queued). */
export async function acknowledge(
  m: Model,
  w: Wiring,
  o: { facts: readonly FactSpec[]; retry: boolean },
): Promise<number> {
  let acked = 0;
  for (const spec of o.facts) {
    if (!deliverable(m, spec)) continue;
    for (const body of factBodies(spec, w.site.clock.now, `${m.nextFact++}`)) {
      for (let attempt = 0; attempt < (o.retry ? 2 : 1); attempt++) {
        w.site.clock.now += 1_000;
        const answer = await post(w, body.body, webhookPair(w.site, body.appId));
        if (answer.status !== 200) {
          m.log.push(`  ${body.trigger} of ${body.appId}: ${answer.status} (not acknowledged)`);
          continue;
        }
        acked++;
        m.delivered.push({
          eventId: eventIdOf(body.body),
          trigger: body.trigger,
          app: body.appId,
          body: body.body,
          uids: body.uids,
          receivedAt: w.site.clock.now,
          pending: true,
        });
      }
    }
  }
  return acked;
}
