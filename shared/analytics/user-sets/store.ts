/**
 * Where the day sets are kept (`UserSetStore`: the data bucket's blob store and a listing of a
 * prefix), an object read (missing: undefined), and which days have sets: a day closed by a
 * final pass has every app's, an open day none.
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { s3BlobStore } from "../../adapters/s3-blob-store";
import { listObjects } from "../../adapters/s3-listing";
import { dayOfKey } from "../../contracts/bucket-layout";
import type { BlobStore } from "../../ports/blob-store";
import { USER_SETS_PREFIX, userSetKey } from "./layout";

/** Where the sets are kept: the data bucket, through its blob store and a listing of a prefix. */
export interface UserSetStore {
  blobs: BlobStore;
  /** The keys under a prefix. */
  list(prefix: string): Promise<string[]>;
}

/** The sets in the data bucket. */
export function s3UserSets(s3: S3Client, bucket: string): UserSetStore {
  return {
    blobs: s3BlobStore(s3, bucket),
    list: async (prefix) => (await listObjects(s3, bucket, prefix)).map((o) => o.key),
  };
}

/**
 * An object of the sets, decoded; undefined when it does not exist (`getBytesIfPresent`: S3's
 * 404, or a 403 that a listing of that key confirms, #48).
 */
export async function read<T>(
  store: UserSetStore,
  key: string,
  decode: (bytes: Uint8Array) => T,
): Promise<T | undefined> {
  const bytes = await store.blobs.getBytesIfPresent(key);
  return bytes && decode(bytes);
}

/**
 * Whether a day's sets exist: a final pass closed it (every app's sets are written at once, so a
 * day either has every app's or none). One LIST.
 *
 * @example await hasDaySets(store, "2026-01-02") // true
 */
export async function hasDaySets(store: UserSetStore, day: string): Promise<boolean> {
  return (await store.list(userSetKey(day))).includes(userSetKey(day));
}

/**
 * The closed days (those with sets), sorted: what `usersOverTime` counts on, and what a reader
 * names when a figure is blank. One LIST per 1,000 days.
 *
 * @example await daySetDays(store) // ["2026-01-01", "2026-01-02"]
 */
export async function daySetDays(store: UserSetStore): Promise<string[]> {
  return (await store.list(USER_SETS_PREFIX)).flatMap((key) => dayOfKey(key) ?? []).sort();
}
