import { fileURLToPath } from "node:url";
import type { BuildOptions } from "esbuild";

/**
 * How every function is bundled, in one place: the CDK app (NodejsFunction) and the bundle-size
 * benchmark use the same settings, so the figure the benchmark prints is what deploys.
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

/** The esbuild options of a function bundle, for the benchmarks that build one as the CDK app does. */
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
