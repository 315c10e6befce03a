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

/**
 * Lambda's SQS event source starts with five pollers, each gathering its own batch ("starting at
 * five concurrent batches"), and the projector's event source allows five invocations at once
 * (`projectorMaxConcurrency`): the benches model the stream as shared evenly by five batches in
 * the making. `BENCH_GATHERERS=1` models one batch gathered at a time (full batches sooner: the
 * optimistic bound; AWS does not document how its pollers share a slow stream).
 */
export const CONCURRENT_BATCHES = Number(process.env.BENCH_GATHERERS ?? 5);

/**
 * The records a batch holds at a steady `rate` (events/s): full, or what its share of the stream
 * brings within the window.
 *
 * @example batchAtRate(200, 2, 100) // 40: five batches share 100 events/s for 2 s
 */
export function batchAtRate(
  batchSize: number,
  windowSeconds: number,
  rate: number,
  gatherers = CONCURRENT_BATCHES,
): number {
  return Math.max(1, Math.min(batchSize, Math.floor((rate * Math.max(windowSeconds, 0.1)) / gatherers)));
}
