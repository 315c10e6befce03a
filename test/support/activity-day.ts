import type { LocalStackInfo } from "../../tools/local/state";
import { runSimulation, type SimulationReport } from "../../tools/simulate/run";
import type { oneDayHistoryStart } from "./clock";

/**
 * A simulated history of one app delivered to the local stack around now, on one UTC day
 * (`oneDayHistoryStart`: today, or yesterday just after midnight), with duplicates and reordering; then, as `simulate --activity`
 * does, the tables checked, the day recomputed and its activity items checked (the report's
 * problems). The activity and console e2e files read the figures of that day.
 */
export async function simulateActivityDay(
  info: LocalStackInfo,
  options: { app: string; events: number; seed: number; history: ReturnType<typeof oneDayHistoryStart> },
): Promise<{ day: string; report: SimulationReport }> {
  const { history } = options;
  const report = await runSimulation({
    url: info.webhookUrl,
    username: info.credentials.username,
    password: info.credentials.password,
    events: options.events,
    rate: 2000,
    concurrency: 8,
    seed: options.seed,
    apps: [options.app],
    startAt: history.startAt,
    activity: true,
    duplicateShare: 0.05,
    reorderShare: 0.1,
    stack: info,
    settleTimeoutSeconds: 120,
  });
  return { day: history.day, report };
}
