/** Error classes of the core. Each names the problem; none carries a credential or a whole body. */

/** The configuration (environment) is missing or malformed; thrown at cold start. */
export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

/** The credential store (Secrets Manager secret or env) holds something that is not a credential list. */
export class CredentialsFormatError extends Error {
  override name = "CredentialsFormatError";
}

/** Durable storage of an accepted event (SQS, or S3 for an oversize body) failed. */
export class EnqueueError extends Error {
  override name = "EnqueueError";
  constructor(
    message: string,
    readonly eventId: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A queue message could not be turned back into the event it carries (bad pointer, missing object). */
export class MessageDecodeError extends Error {
  override name = "MessageDecodeError";
}

/** A failure that is worth retrying (throttling, network): the record goes back to SQS. */
export class TransientError extends Error {
  override name = "TransientError";
}
