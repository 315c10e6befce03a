import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CredentialStore } from "../../shared/apps/rotate";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { parseCredentialList } from "../../shared/ingest/credentials";

/** The local stack's credential store, in its state directory: the deployed secret's JSON shape. */
export const CREDENTIALS_FILE = "credentials.json";

/** `<state dir>/credentials.json`. */
export function credentialsFilePath(stateDir: string): string {
  return join(stateDir, CREDENTIALS_FILE);
}

/**
 * The local credential store, made ready for a start: written with `given` when the start names a
 * username and password, or with `defaults` when there is no store yet; otherwise kept as it is,
 * so a credential added (a rotation) survives a restart. The ingest re-reads it as it re-reads
 * the deployed secret (`fileCredentialSource`). Written whole and then renamed (a reader never
 * sees half a file), readable by its owner only. Returns its path and the credential printed at
 * start (the first).
 *
 * @example ensureCredentialStore(".local", undefined, { username: "local-webhook", password: "…" })
 */
export function ensureCredentialStore(
  stateDir: string,
  given: { username: string; password: string } | undefined,
  defaults: { username: string; password: string },
): { path: string; first: { username: string; password: string } } {
  const path = credentialsFilePath(stateDir);
  let stored: Array<{ username: string; password: string }> | undefined;
  try {
    stored = parseCredentialList(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    stored = undefined;
  }
  if (given || !stored?.length) {
    const credentials = [given ?? defaults];
    mkdirSync(stateDir, { recursive: true });
    writeStore(path, credentials);
    stored = credentials;
  }
  const [first] = stored as [{ username: string; password: string }];
  return { path, first: { username: first.username, password: first.password } };
}

/** The whole list written, then renamed into place (a reader never sees half a file), owner-only. */
function writeStore(path: string, credentials: readonly WebhookCredential[]): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify({ credentials }, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/**
 * The local credential store as `rotate-credentials` reads and writes it (the deployed one is the
 * credentials secret, `tools/ops/app-connection.ts`).
 *
 * @example await fileCredentialStore(credentialsFilePath(".local")).list() // [{ username: "local-webhook", … }]
 */
export function fileCredentialStore(path: string): CredentialStore {
  return {
    list: async () => parseCredentialList(JSON.parse(await readFile(path, "utf8"))),
    write: async (credentials) => writeStore(path, credentials),
  };
}
