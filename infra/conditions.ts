/**
 * The export condition under which the workspace's packages (packages/stream: the stream's
 * consumer package) resolve to their TypeScript sources rather than their built dist/: every
 * tool of this repository uses it, so the backend never runs a stale build. esbuild
 * (`lambdaBuildOptions`), tsc (tsconfig's `customConditions`), vitest (`resolve.conditions`) and
 * tsx (`--conditions=source`: the npm scripts, the processes the tools spawn, and
 * bin/webhook.mjs's resolve hook) all name it. A team installing the package's tarball gets
 * dist/'s JavaScript and declarations instead.
 */
export const SOURCE_CONDITION = "source";
