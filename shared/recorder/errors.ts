/** Why a recording could not be archived; the reason is recorded on the session. */
export type FetchFailureReason =
  | "invalid-url"
  | "refused-scheme"
  | "refused-address"
  | "dns"
  | "too-many-redirects"
  | "http-status"
  | "too-large"
  | "timeout"
  | "network";

/**
 * A failed download. `retryable` failures (5xx, 408, 429, timeouts, network) go back to the
 * queue; the others are final at once.
 */
export class RecordingFetchError extends Error {
  override name = "RecordingFetchError";
  constructor(
    readonly reason: FetchFailureReason,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
