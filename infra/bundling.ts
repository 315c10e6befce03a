import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, type BuildResult, build, buildSync, type Metafile } from "esbuild";
import { SOURCE_CONDITION } from "./conditions";

/**
 * How every function is bundled, in one place: the CDK app (`BackendFunction`'s local bundling)
 * and the benchmarks call the same `bundleFunction`, so the figures they print are what deploys.
 */
export const LAMBDA_NODE_TARGET = "node24";

/** Prefer packages' ES module builds: the AWS SDK's tree-shake far better than their CommonJS ones. */
export const MAIN_FIELDS = ["module", "main"];

/** Replace the SDK's default credential chain by env-only credentials (see lambda-credentials.ts). */
export const ALIASES: Record<string, string> = {
  "@aws-sdk/credential-provider-node": fileURLToPath(new URL("./lambda-credentials.ts", import.meta.url)),
};

/** ESM output needs a `require` for the few CommonJS dependencies that call it. */
export const ESM_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/** The project's root: what entries are named relative to. */
export const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The entry file of each function. */
export const FUNCTION_ENTRIES = {
  ingest: fileURLToPath(new URL("../functions/ingest/handler.ts", import.meta.url)),
  projector: fileURLToPath(new URL("../functions/projector/handler.ts", import.meta.url)),
  recorder: fileURLToPath(new URL("../functions/recorder/handler.ts", import.meta.url)),
  reconciler: fileURLToPath(new URL("../functions/reconciler/handler.ts", import.meta.url)),
  rollup: fileURLToPath(new URL("../functions/rollup/handler.ts", import.meta.url)),
} as const;

/** The query files the rollup reads at run time (`shared/analytics/queries.ts`), copied beside its bundle. */
export const SQL_DIR = fileURLToPath(new URL("../shared/analytics/sql", import.meta.url));

/** The handler file in a function's asset: Lambda's `index.handler`. */
export const HANDLER_FILE = "index.mjs";

/** The esbuild options every bundle shares (a function's, or a benchmark's single-file worker). */
export function lambdaBuildOptions(entry: string): BuildOptions {
  return {
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: "node",
    target: LAMBDA_NODE_TARGET,
    format: "esm",
    mainFields: MAIN_FIELDS,
    // The stream package from its sources (infra/conditions.ts), as every tool here imports it.
    // ("module", esbuild's default when no condition is given, is kept: the SDK's ES builds.)
    conditions: [SOURCE_CONDITION, "module"],
    alias: ALIASES,
    banner: { js: ESM_BANNER },
    logLevel: "error",
  };
}

export interface BundleOptions {
  /** A directory copied beside the handler: `from` (absolute), `to` (relative to the bundle). */
  readonly copy?: { from: string; to: string };
  /** Whether `.map` files are written. @default true */
  readonly sourceMaps?: boolean;
}

/** What `bundleFunction` wrote. */
export interface FunctionBundle {
  /** The handler file, `<outdir>/index.mjs`. */
  handlerFile: string;
}

/** A module the handler imports as `import("./<name>.lazy.mjs")` (source `<name>.lazy.mts`) is bundled on its own. */
const SEPARATELY_BUNDLED = "*.lazy.mjs";

/**
 * Bundles a function into `outdir` as Lambda runs it: `index.mjs` (ESM), with source maps unless
 * `sourceMaps: false` (for a function run without `--enable-source-maps`). What the code loads
 * with a dynamic `import()` is left out of the start-up code, two ways:
 * - esbuild's code splitting puts it in a chunk (`chunks/`), loaded by the first call that needs
 *   it; modules the start-up code also uses stay in chunks it loads (the projector's SQS client);
 * - the handler's `import("./<name>.lazy.mjs")` (the source is `<name>.lazy.mts`) is bundled on
 *   its own, as `<name>.lazy.mjs` beside `index.mjs`, with its own copy of what it shares with the
 *   handler: esbuild places a shared module by which entries reach it, not by which use it, so a
 *   client whose protocol code the start-up clients reach through the SDK's barrel files (S3's
 *   XML, reached through `@aws-sdk/core/protocols`, which the SQS client imports) would land in a
 *   start-up chunk. The ingest's S3 client: ~39 KB less at every cold start, more on the
 *   oversize path. A `.lazy` module may not import another.
 * `copy` puts a directory beside the handler (files read at run time). Synchronous, for the CDK's
 * local bundling; no Docker. A process bundles each function (entry and options) once and copies
 * that bundle to every later `outdir` (the CDK caches a bundle per assembly directory, so a test
 * that synthesizes ten apps would otherwise bundle every function ten times, each a synchronous
 * block of the event loop); `prebundleFunction` builds it ahead without blocking.
 *
 * @example bundleFunction(FUNCTION_ENTRIES.ingest, "/tmp/ingest") // { handlerFile: "/tmp/ingest/index.mjs" }
 */
export function bundleFunction(entry: string, outdir: string, options: BundleOptions = {}): FunctionBundle {
  const key = bundleKey(entry, options);
  let built = bundled.get(key);
  if (!built) {
    built = bundleDir();
    const buildOne = (file: string, name: string) =>
      buildSync(functionBuildOptions(file, name, built as string, options));
    const { metafile } = buildOne(entry, "index");
    for (const [name, source] of separatelyBundled(metafile, entry))
      checkLazy(buildOne(source, name), source);
    finish(built, options);
    bundleCounts.builds++;
    bundled.set(key, built);
  }
  cpSync(built, outdir, { recursive: true });
  return { handlerFile: join(outdir, HANDLER_FILE) };
}

/**
 * Builds a function's bundle as `bundleFunction` would, asynchronously (esbuild works in its own
 * process, the event loop stays free), so that a later `bundleFunction` of the same entry and
 * options only copies it. For processes that synthesize many apps (the infra tests).
 *
 * @example await prebundleFunction(FUNCTION_ENTRIES.ingest, { sourceMaps: false })
 */
export async function prebundleFunction(entry: string, options: BundleOptions = {}): Promise<void> {
  const key = bundleKey(entry, options);
  if (bundled.has(key)) return;
  const built = bundleDir();
  const buildOne = (file: string, name: string) => build(functionBuildOptions(file, name, built, options));
  const { metafile } = await buildOne(entry, "index");
  for (const [name, source] of separatelyBundled(metafile, entry))
    checkLazy(await buildOne(source, name), source);
  finish(built, options);
  bundleCounts.builds++;
  bundled.set(key, built);
}

/** How many bundles this process built (not copied): what the infra tests check their prebundling by. */
export const bundleCounts = { builds: 0 };

/** The finished bundles of this process, by entry and options: a directory each, removed at exit. */
const bundled = new Map<string, string>();

const bundleKey = (entry: string, { copy, sourceMaps = true }: BundleOptions) =>
  JSON.stringify([resolve(entry), copy ?? null, sourceMaps]);

function bundleDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "function-bundle-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function functionBuildOptions(
  file: string,
  name: string,
  outdir: string,
  { sourceMaps = true }: BundleOptions,
) {
  return {
    ...lambdaBuildOptions(file),
    entryPoints: { [name]: file },
    outdir,
    outExtension: { ".js": ".mjs" },
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    external: [SEPARATELY_BUNDLED],
    sourcemap: sourceMaps,
    metafile: true as const,
    absWorkingDir: PROJECT_ROOT,
  } satisfies BuildOptions;
}

function checkLazy(result: BuildResult<{ metafile: true }>, source: string): void {
  if (separatelyBundled(result.metafile, source).size > 0)
    throw new Error(`${source}: a .lazy module may not import another`);
}

function finish(outdir: string, { copy }: BundleOptions): void {
  if (!copy) return;
  mkdirSync(join(outdir, copy.to), { recursive: true });
  cpSync(copy.from, join(outdir, copy.to), { recursive: true });
}

/**
 * The `*.lazy.mjs` modules a bundle imports (left external by esbuild), each as its output name
 * and source file. Only the handler file may import one: the path is relative to `index.mjs`,
 * where esbuild puts the entry's own code.
 */
function separatelyBundled(metafile: Metafile, entry: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [input, { imports }] of Object.entries(metafile.inputs))
    for (const { path, external } of imports) {
      if (!external || !path.endsWith(".lazy.mjs")) continue;
      if (resolve(PROJECT_ROOT, input) !== resolve(entry))
        throw new Error(`${input} imports ${path}: only the handler file may import a .lazy module`);
      found.set(basename(path, ".mjs"), resolve(dirname(entry), path.replace(/\.mjs$/, ".mts")));
    }
  return found;
}
