import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";

/** An object of a listing: its key and size in bytes. */
export interface ListedObject {
  key: string;
  size: number;
}

/**
 * Every object under a prefix, following the listing's pages (1,000 keys a request).
 *
 * @example await listObjects(s3, bucket, "raw/date=2026-01-02/hour=07/") // [{ key, size }, …]
 */
export async function listObjects(s3: S3Client, bucket: string, prefix: string): Promise<ListedObject[]> {
  const objects: ListedObject[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) if (o.Key) objects.push({ key: o.Key, size: o.Size ?? 0 });
    token = page.NextContinuationToken;
  } while (token);
  return objects;
}
