/**
 * `npx webhook console [--stack <name> | --state-dir <dir>] [--port <port>] [--host <loopback>]`:
 * the console in the browser for a deployed stack (with your AWS credentials, on your machine) or
 * a local stack started in another terminal. `npm start` serves it too.
 */
import { Command } from "commander";
import { DEFAULT_GRACE_MINUTES } from "../analytics/activity-view/options";
import { integer, runProgram, withTarget } from "../cli/program";
import { deployedConsoleContext, localConsoleContext } from "../console/context";
import { startConsole } from "../console/server";
import { stateDir } from "../local/state";
import { resolveTarget } from "../target";

interface ConsoleCliOptions {
  port: number;
  host: string;
  graceMinutes: number;
  stack?: string;
  stateDir?: string;
}

async function run(o: ConsoleCliOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  const context =
    target.kind === "local"
      ? localConsoleContext(target, stateDir(o.stateDir))
      : deployedConsoleContext(target);
  const server = await startConsole({
    host: o.host,
    port: o.port,
    // `npm start` may hold 3001 already: then any free port (printed below).
    anyPortIfTaken: true,
    context: { ...context, graceMinutes: o.graceMinutes },
    onError: (error) => console.error(`console: ${error instanceof Error ? error.message : String(error)}`),
  }).catch((error) => {
    target.destroy();
    throw error;
  });
  console.log(
    `Console of ${target.kind === "local" ? "the local stack" : `stack ${o.stack}`} on ${server.url} (Ctrl-C stops)`,
  );
  await new Promise<void>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, () => resolve());
  });
  await server.close();
  target.destroy();
}

const program = withTarget(
  new Command("console")
    .description(
      "The console in the browser: live flow, recent events, activity charts, what is going on now",
    )
    .option("--port <port>", "HTTP port (0: a free one)", integer(0, 65535), 3001)
    .option("--host <address>", "a loopback address to listen on", "127.0.0.1")
    .option(
      "--grace-minutes <minutes>",
      "the rollup's grace period (activityGraceMinutes): a day closes this long after its end",
      integer(0, 1440),
      DEFAULT_GRACE_MINUTES,
    ),
).action((o: ConsoleCliOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
