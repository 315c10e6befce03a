import { gzipSync } from "node:zlib";
import { DeleteObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { listObjects } from "../adapters/s3-listing";
import { getObjectIfPresent } from "../adapters/s3-object-if-present";
import { hasCompaction } from "../analytics/compaction";
import type { ForgetDependencies } from "./plan";

/*
 * The bucket as the erasure's steps read and change it: whole objects (one PUT is atomic), and an
 * object deleted with every version of it.
 */

/**
 * An object's bytes, or undefined when there is none.
 *
 * @example await getBytes(deps, "raw/date=2026-03-01/hour=23/b1.ndjson.gz") // Uint8Array […]
 */
export function getBytes(deps: ForgetDependencies, key: string): Promise<Uint8Array | undefined> {
  return getObjectIfPresent(deps.s3, deps.bucket, key);
}

/**
 * Writes an object's text in one PUT, gzip-compressed when the object it replaces was.
 *
 * @example await putText(deps, key, redacted, true)
 */
export async function putText(
  deps: ForgetDependencies,
  key: string,
  text: string,
  gzip: boolean,
): Promise<void> {
  await deps.s3.send(
    new PutObjectCommand({
      Bucket: deps.bucket,
      Key: key,
      Body: gzip ? gzipSync(text) : text,
      ContentType: gzip
        ? "application/gzip"
        : key.endsWith(".json")
          ? "application/json"
          : "application/octet-stream",
    }),
  );
}

/**
 * Deletes an object and every version of it; returns how many versions went.
 *
 * @example await deleteObject(deps, "recordings/app1/s1.mp4") // 0 (unversioned)
 */
export async function deleteObject(deps: ForgetDependencies, key: string): Promise<number> {
  await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key }));
  return deps.versions.purge(key, { all: true, exact: true });
}

/**
 * Every object under a prefix.
 *
 * @example await keysUnder(deps, "quarantine/app=app1/") // ["quarantine/app=app1/date=…/e1.json"]
 */
export async function keysUnder(deps: ForgetDependencies, prefix: string): Promise<string[]> {
  return (await listObjects(deps.s3, deps.bucket, prefix)).map((o) => o.key);
}

/**
 * The days of a list that have a compaction, or one under way (`hasCompaction`: an Athena CTAS
 * left running would otherwise be adopted after the erasure, with the user's lines).
 *
 * @example await compacted(deps, ["2026-03-01", "2026-03-02"]) // ["2026-03-01"]
 */
export async function compacted(deps: ForgetDependencies, days: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const day of [...new Set(days)].sort())
    if (await hasCompaction(deps.s3, deps.bucket, day)) out.push(day);
  return out;
}
