import { ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";

/** An object of a listing: its key and size in bytes. */
export interface ListedObject {
  key: string;
  size: number;
}

/**
 * Every object under a prefix, following the listing's pages (1,000 keys a request).
 *
 * @example await listObjects(s3, bucket, "raw/app=a1/date=2026-01-02/") // [{ key, size }, …]
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
 * The apps the raw archive holds (`raw/app=<segment>/`), as app ids: one listing request per
 * thousand apps.
 */
export async function listArchiveApps(s3: S3Client, bucket: string): Promise<string[]> {
  const apps: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: "raw/", Delimiter: "/", ContinuationToken: token }),
    );
    for (const p of page.CommonPrefixes ?? []) {
      const segment = /^raw\/app=([^/]+)\/$/.exec(p.Prefix ?? "")?.[1];
      if (segment) apps.push(decodeURIComponent(segment));
    }
    token = page.NextContinuationToken;
  } while (token);
  return apps;
}
