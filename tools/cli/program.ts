import { readFileSync } from "node:fs";
import { type Command, CommanderError, InvalidArgumentError } from "commander";

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
  program.version(VERSION).exitOverride();
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync(argv as string[], { from: "user" });
    // A command that ran but found nothing set its own code (3): keep it.
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    err(`error: ${expectedMessage(error)}`);
    return exitCodeOf(error);
  }
}

/** The message of an error worth one line; anything else is a bug and keeps its stack. */
export function expectedMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
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
    ].includes(error.name) ||
    error.message.startsWith("Java ") ||
    (error as NodeJS.ErrnoException).code === "ECONNREFUSED" ||
    // An AWS answer (access denied, a stack that does not exist) or no AWS credentials at all.
    "$metadata" in error ||
    error.name === "CredentialsProviderError" ||
    error.name === "TimeoutError";
  return expected ? error.message : (error.stack ?? error.message);
}
