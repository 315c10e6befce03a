import { SecretsProvider } from "@aws-lambda-powertools/parameters/secrets";
import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { ContractViolationError } from "@webhook-backend/stream/errors";
import { ENGLISH } from "@webhook-backend/stream/parse";
import { type RecordingApiKeys, recordingApiKeysSchema } from "../contracts/secrets";

/** Where the recorder finds each app's API key: the Secrets Manager secret, or a fixed map (local, tests). */
export type RecordingApiKeySource =
  | { kind: "secret"; secretId: string; cacheSeconds: number }
  | { kind: "static"; keys: RecordingApiKeys };

/**
 * The recorder's per-app API keys (token-protected recordings): a fixed map locally, or the
 * Secrets Manager secret through Powertools Parameters (cached for `cacheSeconds`), parsed by its
 * contract. A malformed secret is a `ContractViolationError` naming the path, never a key.
 *
 * @example const apiKeyFor = recordingApiKeySource(config.apiKeys, secretsClient); await apiKeyFor("app1")
 */
export function recordingApiKeySource(
  apiKeys: RecordingApiKeySource,
  client: () => SecretsManagerClient,
): (appId: string) => Promise<string | undefined> {
  if (apiKeys.kind === "static") return async (appId) => apiKeys.keys[appId];
  const provider = new SecretsProvider({ awsSdkV3Client: client() });
  return async (appId) => {
    const value = await provider.get(apiKeys.secretId, { maxAge: apiKeys.cacheSeconds, transform: "json" });
    const parsed = recordingApiKeysSchema.safeParse(value, ENGLISH);
    if (!parsed.success)
      throw new ContractViolationError(
        `the recording API keys secret is not {"<appId>":"<apiKey>"}: ${parsed.error.issues.map((i) => i.path.join(".") || "(root)").join(", ")}`,
      );
    return parsed.data[appId];
  };
}
