import { describe, it } from "vitest";
import { assertDrawnModel, MAX_STEPS, PROPERTY_RUNS } from "./writers-model/runner";

/**
 * Every writer against every other, in a model (issue #50): drawn runs of deliveries, erasures,
 * rederive, replay, resend, rollups, the schedule, compactions, imports, the retention sweep,
 * rotations, crashes and clock jumps over the real emulators and the commands' cores, two
 * operations interleaved request by request by fast-check's scheduler; the invariants after each
 * step, the figures when the run settles. `npm run test:model` runs it longer (PROPERTY_RUNS);
 * a failure prints its seed and path: PROPERTY_SEED and PROPERTY_PATH replay it.
 */
describe("the writers model", () => {
  it(
    `${PROPERTY_RUNS} drawn runs of at most ${MAX_STEPS} steps keep every invariant`,
    async () => {
      await assertDrawnModel();
    },
    600_000 + PROPERTY_RUNS * 120_000,
  );
});
