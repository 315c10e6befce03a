import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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
    writeFileSync(`${path}.tmp`, `${JSON.stringify({ credentials }, null, 2)}\n`, { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
    stored = credentials;
  }
  const [first] = stored as [{ username: string; password: string }];
  return { path, first: { username: first.username, password: first.password } };
}
