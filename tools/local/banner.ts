/**
 * What `npm start` prints once the stack is ready: where everything is, a `curl` to paste and the
 * commands to try next, every line within 100 columns but the pasted commands with a long path.
 */
import { join } from "node:path";
import { credentialsFilePath } from "./credentials-store";
import { STACK_LOG_FILE } from "./log-tap";
import type { LocalStack } from "./stack";
import { DEV_PASSWORD, DEV_USERNAME } from "./stack-options";
import { type LocalStackInfo, stateDir } from "./state";

export interface BannerOptions {
  stateDir: string;
  inMemory?: boolean;
  verbose?: boolean;
  jsonLogs?: boolean;
  retrySeconds: number;
  /** The console's port asked for (`--console-port`, 3001): one taken moves the console to a free one. */
  consolePort?: number;
}

/**
 * The console's line: its URL, and when the port asked for was taken, that it was (a browser at
 * that address reaches whatever holds it: another stack's console, for one).
 *
 * @example consoleLine("http://127.0.0.1:40655/", 3001) // "http://127.0.0.1:40655/ (port 3001 was taken, by another stack's console?)"
 */
export function consoleLine(url: string | undefined, asked: number | undefined): string {
  if (!url) return "off (--console-port 0)";
  const port = Number(new URL(url).port);
  if (!asked || port === asked) return url;
  return `${url} (port ${asked} was taken, by another stack's console?)`;
}

/** The commands below find the stack by its state directory: say how when it is not the default. */
function elsewhere(o: BannerOptions): string {
  const dir = stateDir(o.stateDir);
  return dir === stateDir(".local") ? "" : ` (first: export LOCAL_STATE_DIR=${dir})`;
}

/**
 * The banner (`readyMs`: how long the start took; `recordingPolicy`: `local` or `deployed`).
 *
 * @example startBanner(stack, { stateDir: ".local", retrySeconds: 5 }, 1800, "local") // "\nWebhook backend is running (ready in 1.8 s; data in …)\n…"
 */
export function startBanner(
  stack: Pick<LocalStack, "credentialCount"> & {
    info: Pick<LocalStackInfo, "webhookUrl" | "healthUrl" | "consoleUrl" | "credentials" | "pid">;
  },
  o: BannerOptions,
  readyMs: number,
  recordingPolicy: string,
): string {
  const { webhookUrl, credentials } = stack.info;
  const { username, password } = credentials;
  const others = stack.credentialCount - 1;
  const note =
    others > 0
      ? ` (the current pair; ${others} more accepted: ${credentialsFilePath(stateDir(o.stateDir))})`
      : username === DEV_USERNAME && password === DEV_PASSWORD
        ? " (development defaults)"
        : ` (rotated or given: ${credentialsFilePath(stateDir(o.stateDir))})`;
  const log = o.inMemory
    ? "none in memory"
    : `${join(stateDir(o.stateDir), STACK_LOG_FILE)}: every line of the functions${
        o.verbose || o.jsonLogs
          ? ", printed here too"
          : "\n                here: a status line and every warning (--verbose: every line)"
      }`;
  return `
Webhook backend is running (ready in ${(readyMs / 1000).toFixed(1)} s; data in ${o.inMemory ? "memory" : stateDir(o.stateDir)})

  Webhook URL   ${webhookUrl}
  Credentials   ${username} / ${password}${note}
  Recordings    ${recordingPolicy === "deployed" ? "deployed policy: https and public addresses only" : "local policy: http and loopback allowed (--deployed-recording-policy for AWS's)"}
  Retries       a failed event is retried every ${o.retrySeconds} s, then dead-lettered (npm run redrive)
  Health        ${stack.info.healthUrl}
  Console       ${consoleLine(stack.info.consoleUrl, o.consolePort)}
  Log           ${log}

Send an event:
  curl -u '${username}:${password}' -H 'content-type: application/json' \\
       --data @tools/simulate/templates/group_created.json ${webhookUrl}

In another terminal${elsewhere(o)}:
  npm run simulate -- --events 5000 --rate 200    today's traffic, then a check of the tables
  npm run query -- group cometchat-guid-1 --app 2598234fa1e3b9c
  npm run query -- stats
  npx webhook query activity --app sim-s7-a1 --from today --to today   recomputed every minute
  npx webhook sql "SELECT trigger, count(*) AS n FROM archive_events GROUP BY trigger"

Ctrl-C stops everything (in-flight batches are finished first); from elsewhere: kill ${stack.info.pid}
(the stack's own pid: a signal to npm's does not reach it).
`;
}
