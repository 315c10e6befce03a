import { RETRY_SPREAD_MS } from "@webhook-backend/stream/fold";
import fc from "fast-check";
import { type BusyHistory, busyDraw, busyHistory } from "../busy-traffic";
import { platformDraw, processedAnyhow, simulatedHistory } from "../histories";

/** The app of the reference property's histories. */
export const REFERENCE_APP = "busy-app";
const APP = REFERENCE_APP;

/** A busy app's history and the simulator's, merged, perhaps with one copy received beyond W. */
export const referenceHistories = fc
  .record({
    busy: busyDraw,
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    events: fc.integer({ min: 0, max: 24 }),
    platform: platformDraw(RETRY_SPREAD_MS),
    late: fc.option(
      fc.record({ of: fc.nat(), after: fc.integer({ min: RETRY_SPREAD_MS + 1, max: 600_000 }) }),
      {
        freq: 4,
      },
    ),
  })
  .map(({ busy, seed, events, platform, late }): BusyHistory => {
    const own = busyHistory(APP, busy);
    const simulated = events >= 5 ? simulatedHistory(APP, seed, events, platform).deliveries : [];
    const all = [...own.deliveries, ...simulated];
    const original = late ? all[late.of % Math.max(1, all.length)] : undefined;
    if (late && original) all.push({ ...original, receivedAt: original.receivedAt + late.after });
    return { ...own, deliveries: all.sort((a, b) => a.receivedAt - b.receivedAt) };
  })
  .chain((history) =>
    processedAnyhow({
      appId: APP,
      generated: { events: [], expected: new Map() },
      deliveries: history.deliveries,
    }).map(({ shuffled }) => ({ history, order: shuffled })),
  );

/** Batch sizes, cycled: how the projector's queue and the subscriber's cut the processing order. */
export const batchSizes = fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 5 });
