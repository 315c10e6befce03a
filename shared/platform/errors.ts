/**
 * The backend's errors: one hierarchy, each class naming its problem, none carrying a credential or
 * a whole body. `retryable` says whether doing the same work again may succeed (the record then
 * goes back to its queue); `cause` keeps the error it wraps. Modelled on Powertools idempotency's
 * and Emmett's error modules. Names are set explicitly: bundles are minified. The root, `BackendError`,
 * and `ContractViolationError` are the stream package's (`@webhook-backend/stream/errors`): its
 * consumers catch them too.
 */
import { BackendError } from "@webhook-backend/stream/errors";

/** Whether a failed read is an object that is not there (S3's `NoSuchKey`, or `NotFound` for a HEAD). */
export function isMissingObject(error: unknown): boolean {
  return error instanceof Error && (error.name === "NoSuchKey" || error.name === "NotFound");
}

/** The configuration (environment or CDK context) is missing or malformed; thrown at cold start or synth. */
export class ConfigurationError extends BackendError {
  override name = "ConfigurationError";
  readonly retryable = false;
}

/** The credential store (Secrets Manager secret or env) holds something that is not a credential list. */
export class CredentialsFormatError extends BackendError {
  override name = "CredentialsFormatError";
  readonly retryable = false;
}

/** An item kept changing under every conditional write: another writer is busy with it; try later. */
export class ItemContentionError extends BackendError {
  override name = "ItemContentionError";
  readonly retryable = true;
}

/**
 * An item is beyond what DynamoDB can hold: a key (of the table or of an index) too long, or the
 * item over 400 KB. The event that makes it so will never be stored: it is quarantined with this
 * message, never retried.
 */
export class ItemLimitError extends BackendError {
  override name = "ItemLimitError";
  readonly retryable = false;
}

/** A storage call did not give what it must (an object without a body, an item that should exist). */
export class StorageError extends BackendError {
  override name = "StorageError";
  readonly retryable = true;
}

/**
 * A fact could not be published to the stream (SNS refused or failed its entry, after retries):
 * its record is retried, and on its last receive kept in the stream's own dead-letter queue.
 */
export class StreamPublishError extends BackendError {
  override name = "StreamPublishError";
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The reasons a recording could not be archived, as recorded on the session and counted. */
export const FETCH_FAILURE_REASONS = [
  "invalid-url",
  "refused-scheme",
  "refused-address",
  "dns",
  "too-many-redirects",
  "http-status",
  "too-large",
  "timeout",
  "network",
] as const;
export type FetchFailureReason = (typeof FETCH_FAILURE_REASONS)[number];

/**
 * A failed download. `retryable` failures (5xx, 408, 429, timeouts, network) go back to the
 * queue; the others are final at once.
 */
export class RecordingFetchError extends BackendError {
  override name = "RecordingFetchError";
  constructor(
    readonly reason: FetchFailureReason,
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** `{ name, message }` of any thrown value, for a log line (never the whole object: it may hold a body). */
export function errorSummary(error: unknown): { name: string; message: string } {
  return error instanceof Error
    ? { name: error.name, message: error.message }
    : { name: "Error", message: String(error) };
}

/**
 * An SQL query over the archive failed (a syntax error, a missing column, a bytes-scanned cutoff)
 * or was cancelled: `message` is the engine's reason on one line; `state` Athena's final state.
 */
export class SqlQueryError extends BackendError {
  override name = "SqlQueryError";
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly state: "FAILED" | "CANCELLED" | "REFUSED" = "FAILED",
  ) {
    super(message);
  }
}

/**
 * A day's compaction is under way (an Athena CTAS still running past the invocation's deadline,
 * or started by an earlier one): it is left to run and adopted by a later attempt, never read
 * before it ends. Not a failure: the schedule reports the day as deferred.
 */
export class CompactionPendingError extends BackendError {
  override name = "CompactionPendingError";
  readonly retryable = true;
  constructor(
    readonly day: string,
    readonly queryId: string,
  ) {
    super(`the compaction of ${day} is still running (Athena query ${queryId}): it is adopted once it ends`);
  }
}

/**
 * A rewrite of the archive in place (`rewriteArchive`) failed after it dropped the compaction of
 * `days` and before it compacted them again: they are read from their NDJSON (right, slower), and
 * the rollup ledger does not call them compacted (a run of the rewrite again finds nothing left to
 * change in them: `webhook compact` compacts them, or the schedule, for yesterday). `cause` is
 * what failed.
 */
export class UncompactedDaysError extends BackendError {
  override name = "UncompactedDaysError";
  readonly retryable = true;
  constructor(
    readonly days: readonly string[],
    cause: unknown,
  ) {
    super(
      `${cause instanceof Error ? cause.message : String(cause)}; the compaction of ${days.join(", ")} was dropped and not written again: they are read from their NDJSON (right, slower) until webhook compact --from ${days[0]} --to ${days.at(-1)} compacts them`,
      { cause },
    );
  }
}

/** The platform's management API refused the key and secret (401/403): check the configuration. */
export class ManagementAuthError extends BackendError {
  override name = "ManagementAuthError";
  readonly retryable = false;
}

/** The management API does not know the app (404 on its webhooks). */
export class UnknownAppError extends BackendError {
  override name = "UnknownAppError";
  readonly retryable = false;
}

/** The management API refused a field of a request (400/422): its message says which. */
export class ManagementRequestError extends BackendError {
  override name = "ManagementRequestError";
  readonly retryable = false;
}

/** The management API kept answering 429/5xx, or did not answer in time, through every retry. */
export class ManagementUnavailableError extends BackendError {
  override name = "ManagementUnavailableError";
  readonly retryable = true;
}

/** The data import API refused the app's API key (401/403): check the import configuration. */
export class ImportAuthError extends BackendError {
  override name = "ImportAuthError";
  readonly retryable = false;
}

/** The data import API has no such path for the app (404): the import address is wrong, or the app unknown. */
export class ImportPathError extends BackendError {
  override name = "ImportPathError";
  readonly retryable = false;
}

/** The data import API kept answering 429/5xx, or did not answer in time, through every retry. */
export class ImportUnavailableError extends BackendError {
  override name = "ImportUnavailableError";
  readonly retryable = true;
}

/**
 * A credential rotation cannot start or finish as asked: a credential the store does not hold,
 * the new one not accepted in time (`shared/apps/rotate.ts`). The message says what stays valid.
 */
export class CredentialRotationError extends BackendError {
  override name = "CredentialRotationError";
  readonly retryable = false;
}
