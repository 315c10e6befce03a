import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import pLimit from "p-limit";

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

/**
 * Listings at once by `listEach`: well under the SDK's 50 sockets, so that a range of a year of
 * days (a search's chunk, an erasure's) queues no request in the SDK (its "socket usage at
 * capacity" warning, #61) and leaves sockets to the requests beside it.
 */
export const LISTINGS_AT_ONCE = 8;

/**
 * Every object under each prefix (`listObjects`), `LISTINGS_AT_ONCE` prefixes at a time, in the
 * prefixes' order.
 *
 * @example await listEach(s3, bucket, ["raw/date=2026-01-01/", "raw/date=2026-01-02/"]) // [[…], […]]
 */
export async function listEach(
  s3: S3Client,
  bucket: string,
  prefixes: readonly string[],
): Promise<ListedObject[][]> {
  const limit = pLimit(LISTINGS_AT_ONCE);
  return Promise.all(prefixes.map((prefix) => limit(() => listObjects(s3, bucket, prefix))));
}
