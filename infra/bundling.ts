import { cpSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, buildSync, type Metafile } from "esbuild";

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
  /** Bytes of JavaScript a cold start loads: the handler file and the chunks it imports statically. */
  startupBytes: number;
  /** Bytes of every JavaScript file, the chunks loaded on first use (`import()`) included. */
  totalBytes: number;
  /** esbuild's account of every output: which inputs each chunk holds. */
  metafile: Metafile;
}

/**
 * Bundles a function into `outdir` as Lambda runs it: `index.mjs` (ESM) with source maps, and,
 * split off by esbuild's code splitting, a chunk per group of modules that the code loads with a
 * dynamic `import()`: those load on first use, not at cold start (the ingest's S3 client, needed
 * only for an oversize body). `copy` puts a directory beside the handler (files read at run time);
 * `sourceMaps: false` writes no `.map` files (a function run without `--enable-source-maps`).
 * Synchronous, for the CDK's local bundling; no Docker.
 *
 * @example bundleFunction(FUNCTION_ENTRIES.ingest, "/tmp/ingest") // { startupBytes: 299_000, … }
 */
export function bundleFunction(
  entry: string,
  outdir: string,
  { copy, sourceMaps = true }: BundleOptions = {},
): FunctionBundle {
  const { metafile } = buildSync({
    ...lambdaBuildOptions(entry),
    entryPoints: { index: entry },
    outdir,
    outExtension: { ".js": ".mjs" },
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    sourcemap: sourceMaps,
    metafile: true,
  });
  if (copy) {
    mkdirSync(join(outdir, copy.to), { recursive: true });
    cpSync(copy.from, join(outdir, copy.to), { recursive: true });
  }
  return { handlerFile: join(outdir, HANDLER_FILE), ...bundleSizes(metafile, outdir), metafile };
}

/** The start-up and total JavaScript bytes of a bundle, from its metafile. */
function bundleSizes(metafile: Metafile, outdir: string): { startupBytes: number; totalBytes: number } {
  const js = Object.entries(metafile.outputs).filter(([file]) => file.endsWith(".mjs"));
  const byFile = new Map(js);
  const entryFile = js.find(([file]) => relative(outdir, file) === HANDLER_FILE)?.[0];
  if (!entryFile) throw new Error(`esbuild wrote no ${HANDLER_FILE} in ${outdir}`);
  const startup = new Set<string>();
  const visit = (file: string) => {
    if (startup.has(file)) return;
    startup.add(file);
    for (const imported of byFile.get(file)?.imports ?? [])
      if (imported.kind === "import-statement" && !imported.external) visit(imported.path);
  };
  visit(entryFile);
  const bytesOf = (files: Iterable<string>) =>
    [...files].reduce((sum, f) => sum + (byFile.get(f)?.bytes ?? 0), 0);
  return { startupBytes: bytesOf(startup), totalBytes: bytesOf(byFile.keys()) };
}
