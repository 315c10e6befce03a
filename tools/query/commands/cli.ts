/**
 * The query CLI: the root command and the options every query takes, the commands in the order
 * `--help` lists them (a file each beside this one), and the parse that turns a usage error or a
 * failure into its exit code.
 */
import { Command, CommanderError } from "commander";
import { exitCodeOf, expectedMessage, VERSION } from "../../cli/program";
import { TABLES_SPEC } from "../../target";
import { addActivityCommand } from "./activity";
import { addDlqCommand } from "./dlq";
import { addEventCommand } from "./event";
import { addGroupCommand } from "./group";
import { addGroupsOfCommand } from "./groups-of";
import { addMembersCommand } from "./members";
import { addOnlineCommand } from "./online";
import { addPresenceCommand } from "./presence";
import { addQuarantineCommand } from "./quarantine";
import { addRecordingsCommand } from "./recordings";
import { type Io, type Run, runner } from "./runner";
import { addSessionCommand } from "./session";
import { addSessionsCommand } from "./sessions";
import { addSessionsOfCommand } from "./sessions-of";
import { addStatsCommand } from "./stats";

/**
 * The query commands, in the order `--help` lists them: the items (groups, members, a user's
 * groups, presence, who is online), the sessions and recordings, what the archive and the queues
 * hold (an event's trace, the quarantine, the dead letters), the activity figures and the counters.
 */
const QUERY_COMMANDS: ReadonlyArray<(program: Command, run: Run) => void> = [
  addGroupCommand,
  addMembersCommand,
  addGroupsOfCommand,
  addPresenceCommand,
  addOnlineCommand,
  addSessionCommand,
  addSessionsCommand,
  addSessionsOfCommand,
  addRecordingsCommand,
  addEventCommand,
  addQuarantineCommand,
  addDlqCommand,
  addActivityCommand,
  addStatsCommand,
];

/**
 * The query CLI: every access pattern of the tables, readable or `--json` (one JSON value on
 * stdout, nothing else there). Exported for the tests; `tools/commands/query.ts` runs it.
 */
export async function runQueryCli(
  argv: string[],
  io: Io = { out: console.log, err: console.error },
): Promise<number> {
  const program = queryProgram(io);
  const outcome = { exitCode: 0 };
  const run = runner(program, io, outcome);
  for (const add of QUERY_COMMANDS) add(program, run);
  const parsed = await parseQueryArgs(program, argv, io);
  return parsed ?? outcome.exitCode;
}

/** The root command and the options every query takes (where the tables are). */
function queryProgram(io: Io): Command {
  return new Command("query")
    .description("Query the projection tables (the local stack by default)")
    .option("--stack <name>", "a deployed stack's name (its outputs name the tables)")
    .option("--tables <spec>", `explicit table names: ${TABLES_SPEC}`)
    .option("--state-dir <dir>", "the local stack's state dir (env LOCAL_STATE_DIR)")
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
}

/**
 * Parses and runs the command line: undefined when the command ran (its exit code is the
 * runner's), else the exit code of a usage error (2; 0 for --help and --version) or a failure (1).
 */
async function parseQueryArgs(program: Command, argv: string[], io: Io): Promise<number | undefined> {
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    // Usage errors (unknown option, bad value, missing argument): 2; --help and --version: 0.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    io.err(`error: ${expectedMessage(error)}`);
    return exitCodeOf(error);
  }
  return undefined;
}
