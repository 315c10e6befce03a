import { GetObjectCommand, ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { isMissingObject, StorageError } from "../platform/errors";

/**
 * Whether a failed S3 request was refused for want of a permission (HTTP 403). S3 answers a
 * GetObject of a key that does not exist with 403 AccessDenied, not 404 NoSuchKey, when the
 * caller lacks `s3:ListBucket` on the bucket (GetObject's reference), and whether a ListBucket
 * grant conditioned on `s3:prefix` (this stack's grants) counts there is undocumented.
 */
export function isAccessDenied(error: unknown): boolean {
  // GetObject's 403 carries the code AccessDenied; a HEAD's has no body, and the SDK names it Forbidden.
  return error instanceof Error && (error.name === "AccessDenied" || error.name === "Forbidden");
}

/**
 * An object's bytes, or undefined when there is no such object: the one read of the backend that
 * takes a missing object as "not there yet" (a day's ledger, a compaction's manifest and marker,
 * the day sets, the import records, an erasure's saved plan). `NoSuchKey` (or `NotFound`) is
 * absence. So is an `AccessDenied` that a listing of that exact key confirms (`Prefix` = the key,
 * `MaxKeys` 1: the key itself sorts first among the keys it prefixes): S3 answers 403 for a
 * missing key to a caller without `s3:ListBucket`, and a ListBucket granted under an `s3:prefix`
 * condition admits this listing (its prefix is the key) whether or not it counts for GetObject.
 * When the listing shows the key, the refusal was real: the original error is thrown. When the
 * listing is refused too, a `StorageError` says that neither read was allowed (cause: the
 * listing's error). Any other failure is thrown as it came.
 *
 * @example await getObjectIfPresent(s3, bucket, "rollup/date=2026-01-02.json") // undefined (never passed over)
 */
export async function getObjectIfPresent(
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<Uint8Array | undefined> {
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return (await out.Body?.transformToByteArray()) ?? new Uint8Array();
  } catch (error) {
    if (isMissingObject(error)) return undefined;
    if (!isAccessDenied(error)) throw error;
    const listed = await s3
      .send(new ListObjectsV2Command({ Bucket: bucket, Prefix: key, MaxKeys: 1 }))
      .catch((listError: unknown) => {
        throw new StorageError(
          `s3://${bucket}/${key}: GetObject and ListObjectsV2 of that key were both refused (grant s3:ListBucket on the key's prefix)`,
          { cause: listError },
        );
      });
    if (listed.Contents?.some((o) => o.Key === key)) throw error;
    return undefined;
  }
}
