/**
 * The errors this package throws, the root of the backend's own hierarchy too (its
 * `shared/platform/errors.ts` extends `BackendError`): `retryable` says whether doing the same
 * work again may succeed. Names are set explicitly: bundles are minified.
 */
export abstract class BackendError extends Error {
  /** Whether the same work may succeed if tried again (a throttle, a network fault, a race). */
  abstract readonly retryable: boolean;
}

/**
 * A message or an object does not match its contract (the stream's envelope, a queue message, an
 * archive line): it will never become valid, so it is quarantined or recorded, never retried.
 */
export class ContractViolationError extends BackendError {
  override name = "ContractViolationError";
  readonly retryable = false;
}
