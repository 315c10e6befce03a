/**
 * The export condition under which the workspace's packages (packages/stream: the stream's
 * consumer package) resolve to their TypeScript sources rather than their built dist/: every
 * tool of this repository uses it, so the backend never runs a stale build. esbuild
 * (`lambdaBuildOptions`), tsc (tsconfig's `customConditions`), vitest (`resolve.conditions`) and
 * tsx (`--conditions=@webhook-backend/source`: the npm scripts, cdk.json, the processes the tools
 * spawn, and bin/webhook.mjs's resolve hook) all name it. A name of this repository's own (#61
 * item 10): a team whose toolchain sets the common `source` condition installs the tarball (which
 * ships no src/) and gets dist/'s JavaScript and declarations, never a missing .ts file.
 */
export const SOURCE_CONDITION = "@webhook-backend/source";
