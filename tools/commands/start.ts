/**
 * `npm start`: the whole backend on this machine. See the README's quick start.
 *   PORT=3000 WEBHOOK_USERNAME=… WEBHOOK_PASSWORD=… LOCAL_STATE_DIR=.local npm start [-- --in-memory|--clean|--verbose|--json-logs]
 */
import { Command, InvalidArgumentError } from "commander";
import { WEBHOOK_PATH_TOKEN } from "../../shared/platform/webhook-path";
import { expectedMessage, integer, runProgram, UsageError } from "../cli/program";
import { localConsoleContext } from "../console/context";
import { type ConsoleServer, startConsole } from "../console/server";
import { startBanner } from "../local/banner";
import { cdkJsonWindows } from "../local/retention";
import { type LocalStack, startLocalStack } from "../local/stack";
import { DEFAULT_LOCAL_RETRY_SECONDS } from "../local/stack-options";
import { stateDir, writeStackInfo } from "../local/state";
import { statusLine } from "../local/status-line";
import { localStreamSubscribers } from "../local/stream";
import { queueDepth } from "../ops/queues";
import { resolveTarget } from "../target";

interface StartOptions {
  port: number;
  stateDir: string;
  inMemory?: boolean;
  clean?: boolean;
  jsonLogs?: boolean;
  verbose?: boolean;
  statusEvery: number;
  retrySeconds: number;
  deployedRecordingPolicy?: boolean;
  activityEvery: number;
  consolePort: number;
  webhookPathToken?: string;
}

/**
 * The console on loopback, at `--console-port` or, when that port is taken (a second stack, a
 * test run), at a free one: the banner and stack.json say where.
 */
async function serveConsole(stack: LocalStack, o: StartOptions): Promise<ConsoleServer> {
  const dir = stateDir(o.stateDir);
  const target = await resolveTarget({ stateDir: dir });
  const context = localConsoleContext(target, dir);
  const onError = (error: unknown) => console.error(`console: ${expectedMessage(error)}`);
  const server = await startConsole({ port: o.consolePort, context, onError, anyPortIfTaken: true });
  stack.info.consoleUrl = server.url;
  writeStackInfo(dir, stack.info);
  return {
    ...server,
    close: async () => {
      await server.close();
      target.destroy();
    },
  };
}

/**
 * The pair `WEBHOOK_USERNAME` and `WEBHOOK_PASSWORD` give, both or neither: a start that names one
 * writes the store with it; one without keeps the store (a rotation survives a restart).
 */
function givenCredentials(env: NodeJS.ProcessEnv): { username?: string; password?: string } {
  const username = env.WEBHOOK_USERNAME?.trim();
  const password = env.WEBHOOK_PASSWORD?.trim();
  if (!username !== !password)
    throw new UsageError(
      "set both WEBHOOK_USERNAME and WEBHOOK_PASSWORD, or neither (the store's current pair is kept)",
    );
  return username && password ? { username, password } : {};
}

/** A path token as the deployment's `webhookPathToken` takes it. */
function pathToken(value: string): string {
  if (!WEBHOOK_PATH_TOKEN.test(value))
    throw new InvalidArgumentError("expected 16 to 128 letters, digits, - or _ (e.g. openssl rand -hex 16).");
  return value;
}

async function run(o: StartOptions): Promise<void> {
  if (o.webhookPathToken && !WEBHOOK_PATH_TOKEN.test(o.webhookPathToken))
    throw new UsageError(
      "WEBHOOK_PATH_TOKEN: expected 16 to 128 letters, digits, - or _ (e.g. openssl rand -hex 16)",
    );
  const recordingPolicy =
    o.deployedRecordingPolicy || process.env.LOCAL_RECORDING_POLICY?.trim() === "deployed"
      ? "deployed"
      : "local";
  const startedAt = Date.now();
  // By default the terminal keeps the banner in sight: a live status line, and WARN and ERROR
  // lines; every line of the functions is in the state directory's log (and here with --verbose).
  const out = process.stdout;
  const status =
    o.jsonLogs || o.verbose
      ? undefined
      : statusLine({
          stream: {
            write: out.write.bind(out),
            isTTY: out.isTTY,
            get columns() {
              return out.columns;
            },
          },
          everyMs: o.statusEvery * 1000,
        });
  const stack = await startLocalStack({
    port: o.port,
    stateDir: stateDir(o.stateDir),
    inMemory: o.inMemory,
    clean: o.clean,
    // Only a pair given here replaces the store: the defaults fill an empty one, never a rotated one.
    ...givenCredentials(process.env),
    webhookPathToken: o.webhookPathToken,
    logMode: o.jsonLogs ? "json" : o.verbose ? "readable" : "status",
    status,
    retrySeconds: o.retrySeconds,
    recordingPolicy,
    activityEveryMinutes: o.activityEvery,
    // cdk.json's retention keys (retain*Days, expire*Days), as a deployment applies them.
    retention: cdkJsonWindows(),
    // cdk.json's stream subscribers (#41; or LOCAL_STREAM_SUBSCRIBERS): each gets its queue and filter here too.
    streamSubscribers: localStreamSubscribers(),
  });
  const console_ = o.consolePort ? await serveConsole(stack, o) : undefined;
  console.log(startBanner(stack, o, Date.now() - startedAt, recordingPolicy));
  status?.start(() => queueDepth(stack.clients.sqs, stack.info.queues.events.url));
  let signals = 0;
  const shutdown = async (signal: string) => {
    if (++signals > 1) return;
    await status?.stop();
    console.log(`\n${signal}: draining and stopping…`);
    try {
      await console_?.close();
      await stack.stop();
      console.log("stopped.");
      process.exit(0);
    } catch (error) {
      console.error(`error: ${expectedMessage(error)}`);
      process.exit(1);
    }
  };
  // Closing the terminal (SIGHUP) drains and stops like Ctrl-C. Nothing acknowledged depends on
  // it (the emulators write through), but in-flight batches are finished rather than retried.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
    process.on(signal, () => void shutdown(signal));
}

const program = new Command("start")
  .description("Run the webhook backend locally on DynamoDB Local and fauxqs (no Docker, no AWS account)")
  .option("--port <port>", "HTTP port (env PORT)", integer(1, 65535), Number(process.env.PORT ?? 3000))
  .option(
    "--state-dir <dir>",
    "where data persists (env LOCAL_STATE_DIR)",
    process.env.LOCAL_STATE_DIR ?? ".local",
  )
  .option("--in-memory", "keep nothing on disk")
  .option("--clean", "start from empty tables, queues and bucket")
  .option(
    "--verbose",
    "print every line of the functions (one per event) instead of the live status; they are always in <state dir>/stack.log",
  )
  .option("--json-logs", "print every line of the functions as the JSON they write")
  .option(
    "--status-every <seconds>",
    "seconds between two status lines (on a terminal the line is redrawn in place)",
    integer(1, 3600),
    5,
  )
  .option(
    "--retry-seconds <seconds>",
    "seconds before a failed event is retried (env LOCAL_RETRY_SECONDS; recording jobs wait 6x)",
    integer(1, 3600),
    Number(process.env.LOCAL_RETRY_SECONDS ?? DEFAULT_LOCAL_RETRY_SECONDS),
  )
  .option(
    "--deployed-recording-policy",
    "fetch recordings as deployed: https and public addresses only (env LOCAL_RECORDING_POLICY=deployed)",
  )
  .option(
    "--activity-every <minutes>",
    "recompute today's activity figures every this many minutes; 0: never (env LOCAL_ACTIVITY_EVERY_MINUTES)",
    integer(0, 1440),
    Number(process.env.LOCAL_ACTIVITY_EVERY_MINUTES ?? 1),
  )
  .option(
    "--console-port <port>",
    "the console's port on 127.0.0.1 (a free one if taken; 0: no console) (env CONSOLE_PORT)",
    integer(0, 65535),
    Number(process.env.CONSOLE_PORT ?? 3001),
  )
  .option(
    "--webhook-path-token <token>",
    "the webhook URL's secret segment, /webhook/<token>, as webhookPathToken deployed (env WEBHOOK_PATH_TOKEN)",
    pathToken,
    process.env.WEBHOOK_PATH_TOKEN?.trim() || undefined,
  )
  .action((o: StartOptions) => run(o));

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exit(code);
