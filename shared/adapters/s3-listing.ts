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

/**
 * The "folders" right under a prefix: the common prefixes of a listing with the delimiter `/`
 * (S3 has no empty folder: each holds an object), one request per 1,000.
 *
 * @example await listFolders(s3, bucket, "raw/date=") // ["raw/date=2026-01-01/", "raw/date=2026-01-02/"]
 */
export async function listFolders(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const folders: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, Delimiter: "/", ContinuationToken: token }),
    );
    for (const { Prefix } of page.CommonPrefixes ?? []) if (Prefix) folders.push(Prefix);
    token = page.NextContinuationToken;
  } while (token);
  return folders;
}
