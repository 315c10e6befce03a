import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { CredentialStore } from "../../shared/apps/rotate";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { parseCredentialList } from "../../shared/ingest/credentials";
import { updateStackInfo } from "./state";

/** The local stack's credential store, in its state directory: the deployed secret's JSON shape. */
export const CREDENTIALS_FILE = "credentials.json";

/** `<state dir>/credentials.json`. */
export function credentialsFilePath(stateDir: string): string {
  return join(stateDir, CREDENTIALS_FILE);
}

/**
 * The pair to show and to paste (the banner, `stack.json`'s `credentials`): the newest credential
 * any app may use that no rotation is replacing (a rotation adds its new one last), else the
 * newest one.
 *
 * @example currentCredential([{ username: "local-webhook", … }, { username: "webhook2026…", replaces: "local-webhook", … }]) // the second
 */
export function currentCredential(credentials: readonly WebhookCredential[]): {
  username: string;
  password: string;
} {
  const kept = credentials.filter((c) => !credentials.some((o) => o.replaces === c.username));
  const current = kept.findLast((c) => c.appIds === undefined) ?? kept.at(-1) ?? credentials.at(-1);
  if (!current) throw new RangeError("an empty credential list has no current credential");
  return { username: current.username, password: current.password };
}

/**
 * The local credential store, made ready for a start: written with `given` when the start names a
 * username and password, or with `defaults` when there is no store yet; otherwise kept as it is,
 * so a rotation (`rotate-credentials`) survives a restart. The ingest re-reads it as it re-reads
 * the deployed secret (`fileCredentialSource`). Written whole and then renamed (a reader never
 * sees half a file), readable by its owner only. Returns its path, the current credential (to
 * print, `currentCredential`) and how many it holds.
 *
 * @example ensureCredentialStore(".local", undefined, { username: "local-webhook", password: "…" })
 */
export function ensureCredentialStore(
  stateDir: string,
  given: { username: string; password: string } | undefined,
  defaults: { username: string; password: string },
): { path: string; current: { username: string; password: string }; count: number } {
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
  return { path, current: currentCredential(stored), count: stored.length };
}

/** The whole list written, then renamed into place (a reader never sees half a file), owner-only. */
function writeStore(path: string, credentials: readonly WebhookCredential[]): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify({ credentials }, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

/**
 * The local credential store as `rotate-credentials` reads and writes it (the deployed one is the
 * credentials secret, `tools/ops/app-connection.ts`). A write also puts the current credential
 * into the running stack's `stack.json` beside it, which the other commands and a person read.
 *
 * @example await fileCredentialStore(credentialsFilePath(".local")).list() // [{ username: "local-webhook", … }]
 */
export function fileCredentialStore(path: string): CredentialStore {
  return {
    list: async () => parseCredentialList(JSON.parse(await readFile(path, "utf8"))),
    write: async (credentials) => {
      writeStore(path, credentials);
      updateStackInfo(dirname(path), { credentials: currentCredential(credentials) });
    },
  };
}
