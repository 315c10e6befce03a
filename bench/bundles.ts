/**
 * What a function's bundle loads, measured as Lambda loads it (a fresh Node process importing its
 * handler): the benchmarks of the ingest's and the projector's start-up share these probes.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { HANDLER_FILE } from "../infra/bundling";
import { byTable, tableEnvironment } from "../shared/platform/tables";
import { percentile } from "./support";

/** Where AWS is for an imported bundle: any credentials and names (nothing is called at import). */
export const PROBE_ENV = {
  PATH: process.env.PATH ?? "",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "bench",
  AWS_SECRET_ACCESS_KEY: "bench",
  EVENTS_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/000000000000/bench",
  DATA_BUCKET: "bench",
  WEBHOOK_CREDENTIALS_SECRET_ID: "bench",
  POWERTOOLS_SERVICE_NAME: "ingest",
  ...tableEnvironment(byTable((name) => name.toUpperCase())),
  RECORDINGS_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/000000000000/recordings",
};

/** After the handler's import, what its init started in the background (the allowlist's module) settles. */
export const SETTLE = "await new Promise((r) => setTimeout(r, 100));";

/** A bundle directory as Lambda gets it, and the NODE_OPTIONS its function runs with. */
export interface Bundle {
  dir: string;
  handlerFile: string;
  nodeOptions: string[];
}

/** `BackendFunction` ships `.map` files only to a function it runs with `--enable-source-maps`. */
export function bundleAt(dir: string): Bundle {
  const handlerFile = join(dir, HANDLER_FILE);
  return { dir, handlerFile, nodeOptions: existsSync(`${handlerFile}.map`) ? ["--enable-source-maps"] : [] };
}

/**
 * KB of JavaScript in a bundle: what importing its handler loads (recorded by a module hook in a
 * fresh Node process: the handler file and the chunks it imports), and every file, the chunks
 * loaded on first use included.
 */
export function bundleKb({ dir, handlerFile }: Bundle, env = PROBE_ENV): { startup: number; total: number } {
  const loaded: string[] = JSON.parse(
    execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { registerHooks } from "node:module"; const seen = []; registerHooks({ load(url, context, next) { seen.push(url); return next(url, context); } }); await import(${JSON.stringify(pathToFileURL(handlerFile).href)}); ${SETTLE} console.log(JSON.stringify(seen));`,
      ],
      { env, encoding: "utf8" },
    ),
  );
  const files = loaded.filter((url) => url.startsWith("file:")).map((url) => fileURLToPath(url));
  const all = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".mjs"));
  const kb = (paths: string[]) => paths.reduce((sum, f) => sum + statSync(f).size, 0) / 1024;
  return { startup: kb(files), total: kb(all.map((f) => join(dir, f))) };
}

/**
 * Milliseconds (wall clock) the first use of code loaded on demand takes to import, once the
 * handler is loaded: a fresh Node process imports the handler, then `files` (paths in the bundle)
 * at once, as the handler's first call that needs them would. Median of `runs`.
 *
 * @example firstUseImportMs(bundle, ["stream-publisher.lazy.mjs", "chunks/projector-stream-AB12.mjs"], env, 21)
 */
export function firstUseImportMs(
  bundle: Bundle,
  files: readonly string[],
  env: Record<string, string>,
  runs: number,
): number {
  const urls = files.map((f) => pathToFileURL(join(bundle.dir, f)).href);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++)
    samples.push(
      Number(
        execFileSync(
          process.execPath,
          [
            ...bundle.nodeOptions,
            "--input-type=module",
            "-e",
            `await import(${JSON.stringify(pathToFileURL(bundle.handlerFile).href)}); ${SETTLE} const t = performance.now(); await Promise.all(${JSON.stringify(urls)}.map((u) => import(u))); console.log(performance.now() - t);`,
          ],
          { env, encoding: "utf8" },
        ).trim(),
      ),
    );
  return percentile(samples, 50);
}
