import { relative } from "node:path";
import type { TestSpecification } from "vitest/node";
import { BaseSequencer, type Reporter, type TestModule, type Vitest } from "vitest/node";

// `npm test` took 16 minutes (issue #42, item 11) before anyone saw which files made it so. The
// reporter names the slowest files at the end of every run of the suite, so that the next
// regression is seen where it happens; the sequencer starts the slow ones first.

/** Files listed at the end of a run. */
const SHOWN = 10;
/** A run of fewer files (a developer's loop over one or two) gets no list. */
const LISTED_FROM = 5;

/** A test file's whole time in its worker: environment, import, set-up, tests and hooks (ms). */
const fileMs = (module: TestModule) => {
  const d = module.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
};

/**
 * The lines printed at the end of a run: the slowest files, each with its seconds and share of
 * the run's test time, then one plain `N passed, N failed, N skipped` line.
 *
 * @example
 * slowestFilesLines([{ file: "test/e2e/ctrl-c.test.ts", ms: 181_000 }, …], { passed: 1022, failed: 0, skipped: 1 }, 824_000)
 * // ["Slowest test files (10 of 92; 1440 s of test time in 824 s):", "  181.0 s  13%  test/e2e/ctrl-c.test.ts", …, "1022 passed, 0 failed, 1 skipped"]
 */
export function slowestFilesLines(
  files: ReadonlyArray<{ file: string; ms: number }>,
  counts: { passed: number; failed: number; skipped: number },
  wallMs: number,
): string[] {
  const total = files.reduce((sum, f) => sum + f.ms, 0);
  const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, SHOWN);
  const lines =
    files.length < LISTED_FROM
      ? []
      : [
          `Slowest test files (${slowest.length} of ${files.length}; ${(total / 1000).toFixed(0)} s of test time in ${(wallMs / 1000).toFixed(0)} s):`,
          ...slowest.map(
            (f) =>
              `  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${String(Math.round((100 * f.ms) / (total || 1))).padStart(3)}%  ${f.file}`,
          ),
        ];
  return [...lines, `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`];
}

/** vitest reporter: after the default one, the slowest files and a plain closing line. */
export default class SlowestFilesReporter implements Reporter {
  private vitest?: Vitest;
  private started = Date.now();
  private lines: string[] = [];

  onInit(vitest: Vitest) {
    this.vitest = vitest;
    this.started = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    if (!this.vitest) return;
    const root = this.vitest.config.root;
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of modules)
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") counts.failed++;
        else counts.skipped++;
      }
    const files = modules.map((m) => ({ file: relative(root, m.moduleId), ms: fileMs(m) }));
    this.lines = slowestFilesLines(files, counts, Date.now() - this.started);
  }

  // Printed after the default reporter's summary (which it prints here), as the run's last lines.
  onFinished() {
    if (this.lines.length) this.vitest?.logger.log(`\n${this.lines.join("\n")}`);
  }
}

/** The suites from the slowest kind to the fastest: each e2e file starts a stack of its own. */
const KINDS = ["test/e2e/", "test/integration/", "test/infra/", "test/unit/"];

/**
 * Starts the longest files first, so that the two workers finish together rather than one
 * running a long file alone at the end. vitest orders by the durations it cached from the last
 * run when it has them; on a fresh clone (CI) it has none and would order by file size, which put
 * the e2e Ctrl-C file (small, three minutes) among the last. Without durations: e2e, then
 * integration, infra and unit files, each by size.
 */
export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const bySize = await super.sort(files);
    const cache = this.ctx.cache;
    const known = (spec: TestSpecification) =>
      cache.getFileTestResults(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`);
    if (bySize.every(known)) return bySize;
    const kind = (spec: TestSpecification) => {
      const path = relative(this.ctx.config.root, spec.moduleId);
      const index = KINDS.findIndex((k) => path.startsWith(k));
      return index < 0 ? KINDS.length : index;
    };
    return bySize
      .map((spec, order) => ({ spec, order }))
      .sort((a, b) => kind(a.spec) - kind(b.spec) || a.order - b.order)
      .map(({ spec }) => spec);
  }
}
