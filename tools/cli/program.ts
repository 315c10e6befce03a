import { readFileSync } from "node:fs";
import { type Command, CommanderError, InvalidArgumentError } from "commander";
import { closest } from "fastest-levenshtein";

/**
 * What every command-line tool shares: `--version`, option values checked with a one-line error
 * and exit code 2 (commander's parsers), and an expected failure (no stack running, a port in use)
 * shown as one line without a stack trace.
 */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** An error the user can act on: printed as one line, exit code 1, no stack trace. */
export class UserFacingError extends Error {
  override name = "UserFacingError";
}

/** A usage error found after parsing (options that contradict each other, an ambiguous id): one line, exit code 2. */
export class UsageError extends UserFacingError {
  override name = "UsageError";
}

/** Nothing was found for what was asked (an app that never delivered): one line, exit code 3. */
export class NothingFoundError extends UserFacingError {
  override name = "NothingFoundError";
}

/** The exit code of an expected failure: 2 a usage error, 3 nothing found, 1 anything else. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return 2;
  return error instanceof NothingFoundError ? 3 : 1;
}

/** A whole number in [min, max]. @example program.option("--port <port>", "…", integer(1, 65535)) */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    return n;
  };
}

/** A number in [min, max] (shares, rates). */
export function decimal(min: number, max: number, { exclusiveMin = false } = {}) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n > max || n < min || (exclusiveMin && n === min))
      throw new InvalidArgumentError(
        `expected a number ${exclusiveMin ? "above" : "from"} ${min}${exclusiveMin ? " up" : ""} to ${max}.`,
      );
    return n;
  };
}

/** A calendar date `YYYY-MM-DD` that exists. */
export function isoDate(value: string): string {
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(value) ||
    Number.isNaN(ms) ||
    new Date(ms).toISOString().slice(0, 10) !== value
  )
    throw new InvalidArgumentError("expected a date YYYY-MM-DD.");
  return value;
}

/**
 * A UTC day: `YYYY-MM-DD`, or `today` or `yesterday` (UTC, at the time of parsing), so that a
 * command written down (the README's) works on any day.
 *
 * @example utcDayOption()("today") // "2026-11-23" on that day
 */
export function utcDayOption(now: () => number = Date.now) {
  return (value: string): string => {
    if (value === "today") return new Date(now()).toISOString().slice(0, 10);
    if (value === "yesterday") return new Date(now() - 86_400_000).toISOString().slice(0, 10);
    try {
      return isoDate(value);
    } catch {
      throw new InvalidArgumentError("expected a date YYYY-MM-DD, today or yesterday.");
    }
  };
}

/** One of a fixed list. */
export function oneOf<T extends string>(...choices: T[]) {
  return (value: string): T => {
    if (!(choices as string[]).includes(value))
      throw new InvalidArgumentError(`expected one of ${choices.join(", ")}.`);
    return value as T;
  };
}

/** The options every command that reaches a stack takes: the local stack's directory, or a deployed stack. */
export function withTarget(command: Command): Command {
  return command
    .option(
      "--state-dir <dir>",
      "the local stack's state directory (env LOCAL_STATE_DIR)",
      process.env.LOCAL_STATE_DIR,
    )
    .option("--stack <name>", "a deployed stack's name (its CloudFormation outputs name the resources)");
}

/**
 * Parses and runs a program: `--version` and `--help` exit 0, a usage error (unknown option,
 * invalid value, missing argument) exits 2 with commander's one-line message, an expected failure
 * exits 1 with its message only (3 when nothing was found). Returns the exit code.
 */
export async function runProgram(
  program: Command,
  argv: readonly string[],
  err: (text: string) => void = (t) => process.stderr.write(`${t}\n`),
): Promise<number> {
  // commander's errors are held, so that one about a missing required option can give way to
  // the unknown option that explains it (`--ap` for `--app`: commander checks the first first).
  const held: Array<() => void> = [];
  const hold = (command: Command) =>
    command.exitOverride().configureOutput({ outputError: (text, write) => held.push(() => write(text)) });
  hold(program.version(VERSION));
  for (const command of program.commands) hold(command);
  const npmTook = optionsNpmTook(program, argv);
  if (npmTook) {
    err(`error: ${npmTook}`);
    return 2;
  }
  try {
    await program.parseAsync(argv as string[], { from: "user" });
    // A command that ran but found nothing set its own code (3): keep it.
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.missingMandatoryOptionValue" && unknownOptionError(program, argv))
        held.splice(0, held.length - 1);
      for (const write of held) write();
      return error.exitCode === 0 ? 0 : 2;
    }
    err(`error: ${expectedMessage(error)}`);
    return exitCodeOf(error);
  }
}

/**
 * Options of the command that npm took for its own configuration: `npm start --port 3005` runs the
 * script with `3005` alone (npm sets `npm_config_port=true`), and `--port=3005` with nothing.
 * What to type instead, or undefined.
 *
 * @example optionsNpmTook(start, ["3005"], { npm_lifecycle_event: "start", npm_lifecycle_script: "node … tools/commands/start.ts", npm_config_port: "true" })
 * // "npm took --port for itself: options go after --, as in npm start -- --port 3005"
 */
export function optionsNpmTook(
  program: Command,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const event = env.npm_lifecycle_event;
  if (!event || event === "npx") return undefined;
  // Only when npm's script is this command: a command run by another script (`npm test`'s tests,
  // whose npm sets npm_config_yes and the like) was not typed after npm.
  if (!env.npm_lifecycle_script?.includes(`commands/${program.name()}.ts`)) return undefined;
  const took = program.options.flatMap((o) => {
    const name = o.long?.replace(/^--(no-)?/, "");
    const value = name === undefined ? undefined : env[`npm_config_${name.replaceAll("-", "_")}`];
    return name === undefined || value === undefined ? [] : [{ flag: `--${name}`, value }];
  });
  if (took.length === 0) return undefined;
  const run = event === "start" || event === "test" ? `npm ${event}` : `npm run ${event}`;
  const typed = took.map((t) =>
    t.value === "true"
      ? t.flag
      : t.value === "" || t.value === "false"
        ? `--no-${t.flag.slice(2)}`
        : `${t.flag} ${t.value}`,
  );
  return `npm took ${took.map((t) => t.flag).join(", ")} for itself: options go after --, as in ${[run, "--", ...typed, ...argv].join(" ")}`;
}

/**
 * When the arguments hold an option the command does not know, commander's error for it (with
 * its suggestion, "(Did you mean --app?)"), raised through the command's held output: whether there
 * was one.
 */
function unknownOptionError(program: Command, argv: readonly string[]): boolean {
  let command = program;
  let args = [...argv];
  for (;;) {
    const sub = command.commands.find((c) => c.name() === args[0] || c.aliases().includes(args[0] ?? ""));
    if (!sub) break;
    command = sub;
    args = args.slice(1);
  }
  const unknown = command.parseOptions(args).unknown.find((a) => a.startsWith("-"));
  if (!unknown) return false;
  const flags = command.options.flatMap((o) => (o.long ? [o.long] : []));
  const flag = unknown.split("=")[0] ?? unknown;
  try {
    command.error(
      `error: unknown option '${flag}'${flags.length ? ` (did you mean ${closest(flag, flags)}?)` : ""}`,
      { code: "commander.unknownOption", exitCode: 1 },
    );
  } catch {
    // Its CommanderError: the message is held.
  }
  return true;
}

/** What to say when the AWS SDK found no region (`--stack`: a deployed stack is in one). */
export const NO_REGION_MESSAGE =
  "no AWS region for --stack: set AWS_REGION (as in AWS_REGION=eu-west-1 npx webhook …), or a region in your AWS profile";

/** The message of an error worth one line; anything else is a bug and keeps its stack. */
export function expectedMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // The SDK's own words ("Region is missing") and a stack trace for what is a setting to make.
  if (error.message === "Region is missing") return NO_REGION_MESSAGE;
  if (error.message.startsWith("Region not accepted"))
    return `${error.message.replace(/\.$/, "")}: set AWS_REGION to one, such as eu-west-1`;
  const expected =
    error instanceof UserFacingError ||
    [
      "PortInUseError",
      "StateDirInUseError",
      "NoLocalStackError",
      "ConfigurationError",
      "PlatformAuthError",
      "ManagementAuthError",
      "UnknownAppError",
      "ManagementRequestError",
      "ManagementUnavailableError",
      "CredentialRotationError",
      "RotationLockedError",
      "ArchiveLockedError",
      "ArchiveLeaseLostError",
      "ImportAuthError",
      "ImportPathError",
      "ImportFileError",
      // A subscription's filter policy a replay cannot evaluate (docs/stream.md: a refusal).
      "FilterPolicyUnsupportedError",
    ].includes(error.name) ||
    error.message.startsWith("Java ") ||
    (error as NodeJS.ErrnoException).code === "ECONNREFUSED" ||
    // An AWS answer (access denied, a stack that does not exist) or no AWS credentials at all.
    "$metadata" in error ||
    error.name === "CredentialsProviderError" ||
    error.name === "TimeoutError";
  return expected ? error.message : (error.stack ?? error.message);
}
