import { readFile } from "node:fs/promises";
import type { WebhookCredential } from "../contracts/secrets";
import { ConfigurationError } from "../platform/errors";
import type { CredentialSource } from "./credential-source";
import { parseCredentialList } from "./credentials";

export interface FileCredentialSourceOptions {
  /** The JSON file holding `{"credentials":[...]}`: the secret's shape (`contracts/secrets.ts`). */
  path: string;
  /** How long a read is reused, seconds (as the secret's cache). */
  maxAgeSeconds: number;
  /** Minimum interval between forced re-reads after a miss, ms (as the secret's). */
  minRefreshIntervalMs: number;
  now?: () => number;
}

/**
 * Credentials from a local JSON file, with the Secrets Manager source's cache rules: a read is
 * reused for `maxAgeSeconds`, and a miss may force one re-read per `minRefreshIntervalMs`. The
 * local stack's credential store (`<state dir>/credentials.json`): a credential added to the file
 * is accepted at its first use, one removed is refused once the cache has expired, as a rotation
 * of the deployed secret behaves. A file that cannot be read or parsed is a `ConfigurationError`
 * naming the file, never its content.
 *
 * @example fileCredentialSource({ path: ".local/credentials.json", maxAgeSeconds: 60, minRefreshIntervalMs: 5_000 })
 */
export function fileCredentialSource(options: FileCredentialSourceOptions): CredentialSource {
  const now = options.now ?? Date.now;
  let cached: { at: number; credentials: WebhookCredential[] } | undefined;
  let lastForced = Number.NEGATIVE_INFINITY;
  const read = async (): Promise<WebhookCredential[]> => {
    let text: string;
    try {
      text = await readFile(options.path, "utf8");
    } catch (error) {
      throw new ConfigurationError(`cannot read the credentials file ${options.path}`, { cause: error });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ConfigurationError(`the credentials file ${options.path} is not JSON`);
    }
    cached = { at: now(), credentials: parseCredentialList(json) };
    return cached.credentials;
  };
  return {
    get: async () =>
      cached && now() - cached.at < options.maxAgeSeconds * 1000 ? cached.credentials : read(),
    refresh: async () => {
      if (now() - lastForced < options.minRefreshIntervalMs) return undefined;
      lastForced = now();
      return read();
    },
  };
}
