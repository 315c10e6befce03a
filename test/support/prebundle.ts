import { FUNCTION_ENTRIES, prebundleFunction, SQL_DIR } from "../../infra/bundling";

/**
 * Builds, without blocking the event loop, every function's bundle with the options the stack
 * gives it (the ingest without source maps, the rollup with its query files), so that the synths
 * of an infra test only copy them (`bundleFunction`). A synchronous build of every function per
 * synth blocked a worker long enough on a busy machine for vitest to report "Timeout calling
 * onTaskUpdate" (issue #29, item 12). The infra test checks that a synth then builds nothing, so
 * options that drift from the stack's show.
 */
export async function prebundleStackFunctions(): Promise<void> {
  await Promise.all([
    prebundleFunction(FUNCTION_ENTRIES.ingest, { sourceMaps: false }),
    prebundleFunction(FUNCTION_ENTRIES.projector),
    prebundleFunction(FUNCTION_ENTRIES.recorder),
    prebundleFunction(FUNCTION_ENTRIES.reconciler),
    prebundleFunction(FUNCTION_ENTRIES.rollup, { copy: { from: SQL_DIR, to: "sql" } }),
  ]);
}
