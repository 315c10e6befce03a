import { createHash } from "node:crypto";
import fc from "fast-check";
import { type GeneratedHistory, generateHistory } from "../../tools/simulate/generator";

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
  /** In event order, each received a little after it happened (receipt times strictly increase). */
  deliveries: Delivery[];
}

function delivery(body: string, receivedAt: number): Delivery {
  return { body, receivedAt, eventId: createHash("sha256").update(body).digest("hex") };
}

/** A simulated history of one app with `events` events (a few more: sessions end whole). */
export function simulatedHistory(appId: string, seed: number, events: number): History {
  const generated = generateHistory({ events, seed, apps: [appId] });
  return {
    appId,
    generated,
    deliveries: generated.events.map((e, i) => delivery(e.body, e.at + 300 + i)),
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
