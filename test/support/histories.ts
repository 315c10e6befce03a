import { createHash } from "node:crypto";
import fc from "fast-check";
import { deliveryPlan, type GeneratedHistory, generateHistory } from "../../tools/simulate/generator";

/**
 * The property tests' histories come from the product's simulator (`tools/simulate/generator.ts`),
 * the one model of the platform and of the state its events imply: fast-check picks the seed,
 * the size, the duplicates and the delivery order, the simulator builds a coherent history.
 */

/** One delivery: the body and the time the edge stamped on it. */
export interface Delivery {
  body: string;
  receivedAt: number;
  eventId: string;
}

export interface History {
  appId: string;
  generated: GeneratedHistory;
  /** In the order received, each a little after it happened (receipt times strictly increase). */
  deliveries: Delivery[];
}

function delivery(body: string, receivedAt: number): Delivery {
  return { body, receivedAt, eventId: createHash("sha256").update(body).digest("hex") };
}

/**
 * A simulated history of one app with `events` events (a few more: sessions end whole), received
 * in the simulator's delivery order: a share of neighbours swapped in transit (never two that the
 * receipt must order), each at least 300 ms after it happened, receipts strictly increasing.
 */
export function simulatedHistory(appId: string, seed: number, events: number): History {
  const generated = generateHistory({ events, seed, apps: [appId] });
  const received = deliveryPlan(generated.events, { seed, duplicateShare: 0, reorderShare: 0.3 });
  let last = 0;
  return {
    appId,
    generated,
    deliveries: received.map((e) => {
      last = Math.max(last + 1, e.at + 300);
      return delivery(e.body, last);
    }),
  };
}

/** A history and, for the same deliveries, a shuffled order with duplicates. */
export const historyArbitrary = (appId: fc.Arbitrary<string>, maxEvents = 30) =>
  fc
    .record({
      appId,
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      events: fc.integer({ min: 5, max: maxEvents }),
    })
    .map(({ appId, seed, events }) => simulatedHistory(appId, seed, events))
    .chain((history) => fc.subarray(history.deliveries).map((duplicates) => ({ history, duplicates })))
    .chain(({ history, duplicates }) =>
      fc
        .shuffledSubarray([...history.deliveries, ...duplicates], {
          minLength: history.deliveries.length + duplicates.length,
        })
        .map((shuffled) => ({ history, shuffled })),
    );

/**
 * Histories in which the simulator makes facts at the same instant (found by scanning its seeds:
 * a group created and deleted in one second, two renames, two owner transfers, presence flapping
 * within one ms, a call busy, rejected or unanswered within the second it was initiated, a call
 * started and ended in one second), with each of the and fast-check's counterexamples.
 * The property tests check them on every run, delivered in reverse with every delivery twice.
 */
export const SAME_INSTANT_SEEDS = [83, 0, 30, 1, 77, 214, 366, 320, 397, 29] as const;

/** A fixed example of `historyArbitrary`'s values: seed, 30 events, delivered in reverse, each twice. */
export function sameInstantExample(appId: string, seed: number) {
  const history = simulatedHistory(appId, seed, 30);
  const reversed = [...history.deliveries].reverse();
  return { history, shuffled: [...reversed, ...reversed] };
}
