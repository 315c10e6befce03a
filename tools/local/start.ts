/**
 * `npm start`: the whole backend on this machine. See the README's quick start.
 *   PORT=3000 WEBHOOK_USERNAME=… WEBHOOK_PASSWORD=… LOCAL_STATE_DIR=.local npm start [-- --in-memory|--clean|--json-logs]
 */
import { Command } from "commander";
import { DEV_PASSWORD, DEV_USERNAME, PortInUseError, startLocalStack } from "./stack";
import { stateDir } from "./state";

const program = new Command("start")
  .description("Run the webhook backend locally on DynamoDB Local and fauxqs (no Docker, no AWS account)")
  .option("--port <port>", "HTTP port (env PORT)", process.env.PORT ?? "3000")
  .option(
    "--state-dir <dir>",
    "where data persists (env LOCAL_STATE_DIR)",
    process.env.LOCAL_STATE_DIR ?? ".local",
  )
  .option("--in-memory", "keep nothing on disk")
  .option("--clean", "start from empty tables and bucket")
  .option("--json-logs", "print the functions' logs as JSON lines")
  .option(
    "--retry-seconds <seconds>",
    `seconds before a failed event is retried (env LOCAL_RETRY_SECONDS; recording jobs wait 6x)`,
    process.env.LOCAL_RETRY_SECONDS ?? String(DEFAULT_LOCAL_RETRY_SECONDS),
  )
  .option(
    "--deployed-recording-policy",
    "fetch recordings as deployed: https and public addresses only (env LOCAL_RECORDING_POLICY=deployed)",
  )
  .parse();
const options = program.opts<{
  port: string;
  stateDir: string;
  inMemory?: boolean;
  clean?: boolean;
  jsonLogs?: boolean;
  deployedRecordingPolicy?: boolean;
}>();
const recordingPolicy =
  options.deployedRecordingPolicy || process.env.LOCAL_RECORDING_POLICY?.trim() === "deployed"
    ? "deployed"
    : "local";

const username = process.env.WEBHOOK_USERNAME?.trim() || DEV_USERNAME;
const password = process.env.WEBHOOK_PASSWORD?.trim() || DEV_PASSWORD;
const dir = stateDir(options.stateDir);
const startedAt = Date.now();
let stack: Awaited<ReturnType<typeof startLocalStack>>;
try {
  stack = await startLocalStack({
    port: Number(options.port),
    stateDir: dir,
    inMemory: options.inMemory,
    clean: options.clean,
    username,
    password,
    logMode: options.jsonLogs ? "json" : "readable",
    recordingPolicy,
  });
} catch (error) {
  console.error(
    error instanceof PortInUseError || (error as Error).message.startsWith("Java")
      ? (error as Error).message
      : error,
  );
  process.exit(1);
}

const { webhookUrl } = stack.info;
const defaults = username === DEV_USERNAME && password === DEV_PASSWORD ? " (development defaults)" : "";
console.log(`
Webhook backend is running (ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s; data in ${options.inMemory ? "memory" : dir})

  Webhook URL   ${webhookUrl}
  Credentials   ${username} / ${password}${defaults}
  Recordings    ${recordingPolicy === "deployed" ? "deployed policy: https and public addresses only" : "local policy: http and loopback allowed (--deployed-recording-policy for AWS's)"}
  Health        ${stack.info.healthUrl}

Send an event:
  curl -u '${username}:${password}' -H 'content-type: application/json' \\
       --data @tools/simulate/templates/group_created.json ${webhookUrl}

In another terminal:
  npm run simulate -- --events 2000 --rate 200        realistic traffic, then a check of the tables
  npm run query -- group cometchat-guid-1 --app 2598234fa1e3b9c
  npm run query -- stats

Ctrl-C stops everything (in-flight batches are finished first).
`);

let signals = 0;
const shutdown = async (signal: string) => {
  if (++signals > 1) return;
  console.log(`\n${signal}: draining and stopping…`);
  await stack.stop();
  console.log("stopped.");
  process.exit(0);
};
// Closing the terminal (SIGHUP) drains and stops like Ctrl-C; nothing acknowledged depends on
// it (the emulators write through), but in-flight batches are finished rather than retried.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void shutdown(signal));
