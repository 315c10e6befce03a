import { InvalidArgumentError } from "commander";
import { UsageError } from "./program";

/**
 * An event's id is the SHA-256 of its body, 64 hex characters (what the ingest answers). Every
 * command prints it in one form, its first 16 characters (64 bits: unambiguous far beyond any
 * archive), and `--json` gives all 64. Every command that takes an id takes any prefix of at least
 * 12 characters; a prefix that fits several events is an error that lists them.
 */
export const PRINTED_ID_LENGTH = 16;
const MIN_PREFIX_LENGTH = 12;

/** The printed form of an event id. @example shortId("33db60451d28b006f1…") // "33db60451d28b006" */
export function shortId(eventId: string): string {
  return eventId.slice(0, PRINTED_ID_LENGTH);
}

/**
 * An id or a prefix of one, as typed (commander's argument parser: anything else is a usage error).
 *
 * @example eventIdPrefix("33DB60451D28") // "33db60451d28"
 */
export function eventIdPrefix(value: string): string {
  const prefix = value.trim().toLowerCase();
  if (!new RegExp(`^[0-9a-f]{${MIN_PREFIX_LENGTH},64}$`).test(prefix))
    throw new InvalidArgumentError(
      `expected an event id: ${MIN_PREFIX_LENGTH} to 64 hex characters (as printed, or the ingest's full id), not "${value}".`,
    );
  return prefix;
}

/** A prefix that fits several events: the operator picks one by a longer prefix. */
export class AmbiguousEventIdError extends UsageError {
  constructor(prefix: string, matches: readonly string[]) {
    super(
      `event id ${prefix} fits ${matches.length} events (${[...matches].sort().map(shortId).join(", ")}): give more of it`,
    );
  }
}

/** The one event id among `ids` that starts with `prefix` (duplicates allowed); undefined if none, ambiguous if several. */
export function oneEventId(prefix: string, ids: Iterable<string | undefined>): string | undefined {
  const matches = new Set([...ids].filter((id): id is string => id?.startsWith(prefix) === true));
  if (matches.size > 1) throw new AmbiguousEventIdError(prefix, [...matches]);
  return [...matches][0];
}
