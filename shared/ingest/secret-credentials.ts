import { SecretsProvider } from "@aws-lambda-powertools/parameters/secrets";
import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { WebhookCredential } from "../contracts/secrets";
import type { CredentialSource } from "./credential-source";
import { parseCredentialList } from "./credentials";

export interface SecretCredentialSourceOptions {
  /** Name or ARN of the secret holding `{"credentials":[...]}`. */
  secretId: string;
  /** How long a read is reused in the warm container, seconds. */
  maxAgeSeconds: number;
  /** Minimum interval between forced re-reads after a miss, ms: a flood of bad passwords cannot hammer Secrets Manager. */
  minRefreshIntervalMs: number;
  client?: SecretsManagerClient;
  now?: () => number;
}

/**
 * Credentials from a Secrets Manager secret through Powertools Parameters (which caches the
 * value for `maxAgeSeconds`). A miss may force one re-read per `minRefreshIntervalMs`.
 */
export function secretCredentialSource(options: SecretCredentialSourceOptions): CredentialSource {
  const provider = new SecretsProvider(options.client ? { awsSdkV3Client: options.client } : {});
  const now = options.now ?? Date.now;
  let lastForced = Number.NEGATIVE_INFINITY;
  const read = async (forceFetch: boolean): Promise<WebhookCredential[]> =>
    parseCredentialList(
      await provider.get(options.secretId, { maxAge: options.maxAgeSeconds, transform: "json", forceFetch }),
    );
  return {
    get: () => read(false),
    refresh: async () => {
      if (now() - lastForced < options.minRefreshIntervalMs) return undefined;
      lastForced = now();
      return read(true);
    },
  };
}
