import type { WebhookCredential } from "../contracts/secrets";

/**
 * Where the ingest gets its credentials: cached, with a way to re-read after a miss (rotation).
 * Adapters: `./secret-credentials` (Secrets Manager), `staticCredentialSource` (env, tests).
 */
export interface CredentialSource {
  /** The current list (possibly cached). */
  get(): Promise<WebhookCredential[]>;
  /** Re-reads the store; returns undefined when a refresh is not allowed right now (rate limit). */
  refresh(): Promise<WebhookCredential[] | undefined>;
}
