import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import * as z from "zod/mini";
import { S3_PREFIX } from "../platform/constants";
import { parseNdjsonObject } from "./bucket-layout";

/**
 * What the backend keeps of an import (#43): the entries the platform confirmed, so that the
 * backend's copy knows what the platform holds although no webhook announced it (the spec does not
 * say that imported data produces events). Beside the archive, never in it: the raw archive holds
 * deliveries as they were received.
 *
 * Per kind and import day (UTC), every app together, the app a field of each line (as the
 * archive and the day sets):
 * - `imports/<kind>/date=<day>/batch-<id>.ndjson.gz`: one per batch the platform confirmed,
 *   written as the import goes (only ever added): what a re-run after a crash skips. Its id is
 *   random (`newImportBatchId`, #50): a key made from the batch's ids (the digest of the app and
 *   its uids, before #50) would let anyone who can list the bucket test candidate uids against it,
 *   and so recover a uid an erasure replaced inside the object. Keys of that older form are read
 *   as any other; an erasure that rewrites one moves its lines to a random key;
 * - `imports/<kind>/date=<day>/<kind>.ndjson.gz`: the day's batches folded into one object when an
 *   import ends (`foldImportBatches`, under the archive lease), so that a reader makes one GET a
 *   day on which something was imported, not one a batch.
 *
 * A reader takes the union of both and keeps each id once.
 */

/** The kinds the backend records (the spec shows the path of `users` only: section 4, endpoint 3). */
export type RecordedImportKind = "users";

/** One imported user: who, since when they exist, and when the platform confirmed them. */
export const importedUserSchema = z.object({
  app: z.string().check(z.minLength(1)),
  uid: z.string().check(z.minLength(1)),
  /** When the user was created in the previous system (epoch s), as the import file said. */
  createdAt: z.optional(z.number()),
  /** When the platform confirmed the user (epoch s). */
  importedAt: z.number(),
  /** The platform answered that it had the user already (created before, or by an earlier run). */
  existed: z.optional(z.boolean()),
});
export type ImportedUser = z.infer<typeof importedUserSchema>;

/** @example importsPrefix("users") // "imports/users/" */
export function importsPrefix(kind: RecordedImportKind): string {
  return `${S3_PREFIX.imports}${kind}/`;
}

/** @example importBatchKey("users", "2026-01-02", "ab12") // "imports/users/date=2026-01-02/batch-ab12.ndjson.gz" */
export function importBatchKey(kind: RecordedImportKind, day: string, id: string): string {
  return `${importsPrefix(kind)}date=${day}/batch-${id}.ndjson.gz`;
}

/** A batch record's id: 32 random hex digits, nothing of who is in the batch. */
export function newImportBatchId(): string {
  return randomBytes(16).toString("hex");
}

/** @example importDayKey("users", "2026-01-02") // "imports/users/date=2026-01-02/users.ndjson.gz" */
export function importDayKey(kind: RecordedImportKind, day: string): string {
  return `${importsPrefix(kind)}date=${day}/${kind}.ndjson.gz`;
}

/** Whether a key is a batch record (not yet folded into its day's object). */
export function isImportBatchKey(key: string): boolean {
  return /\/date=\d{4}-\d{2}-\d{2}\/batch-[^/]+\.ndjson\.gz$/.test(key);
}

/** The lines of an import record object (gzip NDJSON). */
export function encodeImportedUsers(users: readonly ImportedUser[]): Uint8Array {
  return gzipSync(users.map((u) => `${JSON.stringify(u)}\n`).join(""));
}

/**
 * An import record object's users, each line parsed by its contract.
 *
 * @throws ContractViolationError naming the key when a line breaks the contract
 */
export function decodeImportedUsers(bytes: Uint8Array, key: string): ImportedUser[] {
  return parseNdjsonObject(importedUserSchema, bytes, `import record line in ${key}`);
}

/**
 * The day an imported user exists from: their `createdAt`, else the day the platform confirmed
 * them (UTC `yyyy-mm-dd`).
 *
 * @example existsFrom({ app: "a", uid: "u", importedAt: 1767312000 }) // "2026-01-02"
 */
export function existsFrom(user: ImportedUser): string {
  return new Date((user.createdAt ?? user.importedAt) * 1000).toISOString().slice(0, 10);
}
