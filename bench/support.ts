/** The p-th percentile (0-100) of a sample, nearest-rank. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/**
 * fauxqs in its own process (on loopback, in memory), so that its CPU and memory are not counted
 * in the benchmarked code's figures: the test run's own starter.
 */
export { startFauxqsProcess } from "../tools/local/emulators";
