import { createHash } from "node:crypto";
import { DeleteObjectsCommand, type S3Client } from "@aws-sdk/client-s3";
import pLimit from "p-limit";
import { dayOfKey } from "../contracts/bucket-layout";
import {
  decodeImportedUsers,
  encodeImportedUsers,
  type ImportedUser,
  importBatchKey,
  importDayKey,
  importsPrefix,
  isImportBatchKey,
  type RecordedImportKind,
} from "../contracts/import-records";
import type { BlobStore } from "../ports/blob-store";
import { type ArchiveLease, withArchiveLease } from "./archive-lease";
import { s3BlobStore } from "./s3-blob-store";
import { listObjects } from "./s3-listing";

/** S3's DeleteObjects takes up to 1,000 keys a request. */
const DELETE_BATCH = 1000;

/** The import records in the data bucket (`contracts/import-records.ts`): read, added to, folded. */
export interface ImportRecords {
  /** Every user recorded as imported into `app`, by uid (`importedUsersOf`). */
  users(app: string): Promise<Map<string, ImportedUser>>;
  /**
   * Records a batch the platform confirmed, under its import day (only ever adds an object: its
   * key is the digest of the app and the uids, so recording it again overwrites it with itself).
   */
  addBatch(app: string, users: readonly ImportedUser[]): Promise<string>;
  /**
   * Folds every batch object into its day's object (read, merged, written, then the batches
   * deleted), holding the archive lease as every rewriter of stored objects does. A fold that dies
   * midway leaves the batches that were not deleted: the next fold folds them again, and a reader
   * keeps each uid once. Returns how many batch objects it folded.
   */
  fold(lease: ArchiveLease, now: () => number): Promise<number>;
}

const KIND: RecordedImportKind = "users";

/** The earlier confirmation of a user recorded twice (folded and not yet deleted, or two runs at once). */
function earlier(a: ImportedUser | undefined, b: ImportedUser): ImportedUser {
  return a && a.importedAt <= b.importedAt ? a : b;
}

/** An import record object's users; none when it is gone (folded and deleted since the listing). */
async function readRecord(blobs: BlobStore, key: string): Promise<ImportedUser[]> {
  const bytes = await blobs.getBytesIfPresent(key);
  return bytes ? decodeImportedUsers(bytes, key) : [];
}

/** Where the import records are read from: the data bucket as a blob store and a listing (the day sets' store is one). */
export interface ImportRecordSource {
  blobs: BlobStore;
  list(prefix: string): Promise<string[]>;
}

/**
 * Every user recorded as imported into `app`, by uid (each once: the earliest confirmation), from
 * the days' objects and the batches not folded yet: what an import skips, and what the figures
 * count from each user's `createdAt` (`analytics/user-sets/`). Reads every import record object,
 * 16 at once: one a day on which something was imported, and the batches of an unfinished import.
 *
 * @example const imported = await importedUsersOf(s3UserSets(s3, bucket), "app1") // Map { "u1" => { uid: "u1", createdAt: … } }
 */
export async function importedUsersOf(
  source: ImportRecordSource,
  app: string,
): Promise<Map<string, ImportedUser>> {
  const limit = pLimit(16);
  const objects = await Promise.all(
    (await source.list(importsPrefix(KIND))).map((key) => limit(() => readRecord(source.blobs, key))),
  );
  const out = new Map<string, ImportedUser>();
  for (const users of objects)
    for (const user of users) if (user.app === app) out.set(user.uid, earlier(out.get(user.uid), user));
  return out;
}

/**
 * The import records of a bucket. Takes its client.
 *
 * @example const records = s3ImportRecords(s3, bucket); const done = await records.users("app1")
 */
export function s3ImportRecords(s3: S3Client, bucket: string): ImportRecords {
  const blobs = s3BlobStore(s3, bucket);
  const read = (key: string) => readRecord(blobs, key);
  const list = async (prefix: string) => (await listObjects(s3, bucket, prefix)).map((o) => o.key);
  const keys = () => list(importsPrefix(KIND));
  const put = (key: string, users: readonly ImportedUser[]) =>
    blobs.put(key, encodeImportedUsers(users), { contentType: "application/gzip" });

  return {
    users: (app) => importedUsersOf({ blobs, list }, app),

    async addBatch(app, users) {
      const first = users[0];
      if (!first) return "";
      const digest = createHash("sha256")
        .update(JSON.stringify([app, ...users.map((u) => u.uid).sort()]))
        .digest("hex")
        .slice(0, 32);
      const key = importBatchKey(KIND, new Date(first.importedAt * 1000).toISOString().slice(0, 10), digest);
      await put(key, users);
      return key;
    },

    fold: (lease, now) =>
      withArchiveLease(lease, `import fold (${KIND})`, now, async (renew) => {
        const byDay = new Map<string, string[]>();
        for (const key of await keys()) {
          const day = dayOfKey(key);
          if (day && isImportBatchKey(key)) byDay.set(day, [...(byDay.get(day) ?? []), key]);
        }
        let folded = 0;
        for (const [day, batches] of [...byDay].sort(([a], [b]) => (a < b ? -1 : 1))) {
          await renew();
          const merged = new Map<string, ImportedUser>();
          for (const user of await read(importDayKey(KIND, day)))
            merged.set(`${user.app}\0${user.uid}`, user);
          for (const key of batches)
            for (const user of await read(key)) {
              const id = `${user.app}\0${user.uid}`;
              merged.set(id, earlier(merged.get(id), user));
            }
          const lines = [...merged.values()].sort((a, b) =>
            a.app === b.app ? (a.uid < b.uid ? -1 : 1) : a.app < b.app ? -1 : 1,
          );
          await put(importDayKey(KIND, day), lines);
          for (let i = 0; i < batches.length; i += DELETE_BATCH) {
            const out = await s3.send(
              new DeleteObjectsCommand({
                Bucket: bucket,
                Delete: { Objects: batches.slice(i, i + DELETE_BATCH).map((Key) => ({ Key })), Quiet: true },
              }),
            );
            if (out.Errors?.length)
              throw new Error(
                `${out.Errors.length} folded import batches could not be deleted (first: ${out.Errors[0]?.Key}: ${out.Errors[0]?.Code}): the next fold takes them again`,
              );
          }
          folded += batches.length;
        }
        return folded;
      }),
  };
}
