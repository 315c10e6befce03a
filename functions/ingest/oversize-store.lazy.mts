import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import type { AwsClientSettings } from "../../shared/platform/aws-clients";
import { s3Client } from "../../shared/platform/s3-client";
import type { BlobStore } from "../../shared/ports/blob-store";

/**
 * Where the ingest stores a body SQS cannot take: the S3 client, loaded by the first such request
 * (`import("./oversize-store.lazy.mjs")`) and bundled on its own (`infra/bundling.ts`), so that none
 * of its code is in the ingest's start-up code.
 *
 * @example const store = (await import("./oversize-store.lazy.mjs")).oversizeStore(config.aws, config.dataBucket)
 */
export function oversizeStore(settings: AwsClientSettings, bucket: string): BlobStore {
  return s3BlobStore(s3Client(settings), bucket);
}
