import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { StorageError } from "../platform/errors";
import type { BlobStore } from "../ports/blob-store";
import { getObjectIfPresent } from "./s3-object-if-present";

/**
 * An S3 bucket as a `BlobStore`. Takes its client; objects are written with SSE (AES-256 unless
 * the bucket's default is KMS), and integrity is checked by the SDK's default checksums.
 *
 * @example const store = s3BlobStore(s3Client(config.aws), config.dataBucket)
 */
export function s3BlobStore(client: S3Client, bucket: string): BlobStore {
  return {
    bucket,
    async put(key, body, options = {}) {
      const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: bytes,
          ContentType: options.contentType ?? "application/octet-stream",
          Metadata: options.metadata,
        }),
      );
      return { bucket, key, size: bytes.byteLength };
    },
    async getText(key) {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!out.Body) throw new StorageError(`s3://${bucket}/${key} has no body`);
      return out.Body.transformToString("utf8");
    },
    async getBytes(key) {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!out.Body) throw new StorageError(`s3://${bucket}/${key} has no body`);
      return out.Body.transformToByteArray();
    },
    getBytesIfPresent: (key) => getObjectIfPresent(client, bucket, key),
  };
}
