/** Error classes of the core. Each names the problem; none carries a credential or a whole body. */

/** The configuration (environment) is missing or malformed; thrown at cold start. */
export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

/** The credential store (Secrets Manager secret or env) holds something that is not a credential list. */
export class CredentialsFormatError extends Error {
  override name = "CredentialsFormatError";
}

/** A failure that is worth retrying (throttling, network): the record goes back to SQS. */
export class TransientError extends Error {
  override name = "TransientError";
}
