import { DeleteObjectsCommand, ListObjectVersionsCommand, type S3Client } from "@aws-sdk/client-s3";

/**
 * The old versions of objects (the deployed bucket is versioned and keeps an overwritten or
 * deleted object's versions `retainNoncurrentVersionsDays`): what an erasure must delete after
 * rewriting an object, or the rewrite would leave the user in the version it replaced.
 */
export interface ObjectVersions {
  /**
   * Deletes every version of the objects under `prefix` (a key is its own prefix) but the
   * current one of each, delete markers included; with `all`, the current ones too (an object
   * deleted outright: a recording, a plan). Returns how many versions it deleted.
   */
  purge(prefix: string, options?: { all?: boolean; exact?: boolean }): Promise<number>;
}

/** S3's DeleteObjects takes up to 1,000 keys a request. */
const DELETE_BATCH = 1000;

/**
 * The versions of a versioned S3 bucket: ListObjectVersions under the prefix (paginated), then
 * DeleteObjects by version id, 1,000 a request. With `exact`, only the key equal to the prefix
 * (so `raw/…/a.ndjson.gz` does not also purge `raw/…/a.ndjson.gz.old`).
 *
 * @example await s3ObjectVersions(s3, bucket).purge("raw/date=2026-01-02/hour=07/5f0c.ndjson.gz", { exact: true }) // 1
 */
export function s3ObjectVersions(s3: S3Client, bucket: string): ObjectVersions {
  return {
    async purge(prefix, { all = false, exact = false } = {}) {
      const doomed: Array<{ Key: string; VersionId: string }> = [];
      let KeyMarker: string | undefined;
      let VersionIdMarker: string | undefined;
      do {
        const page = await s3.send(
          new ListObjectVersionsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker, VersionIdMarker }),
        );
        for (const v of [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])])
          if (v.Key && v.VersionId && (all || !v.IsLatest) && (!exact || v.Key === prefix))
            doomed.push({ Key: v.Key, VersionId: v.VersionId });
        KeyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
        VersionIdMarker = page.IsTruncated ? page.NextVersionIdMarker : undefined;
      } while (KeyMarker);
      for (let i = 0; i < doomed.length; i += DELETE_BATCH) {
        const out = await s3.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: doomed.slice(i, i + DELETE_BATCH), Quiet: true },
          }),
        );
        const failed = out.Errors ?? [];
        if (failed.length)
          throw new Error(
            `${failed.length} object versions could not be deleted (first: ${failed[0]?.Key}: ${failed[0]?.Code})`,
          );
      }
      return doomed.length;
    },
  };
}

/**
 * A bucket that keeps no versions (the local stack's: fauxqs has no versioning): an overwrite
 * leaves nothing behind, so there is nothing to purge; an object deleted outright is deleted by
 * the caller.
 */
export const UNVERSIONED: ObjectVersions = { purge: async () => 0 };
