import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";

/** What a stored object is: enough to find and verify it. */
export interface StoredObject {
  bucket: string;
  key: string;
  size: number;
}

/** Object storage used for oversize bodies, the raw archive and quarantine. */
export interface BlobStore {
  readonly bucket: string;
  put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<StoredObject>;
  getText(key: string): Promise<string>;
}

export interface PutOptions {
  contentType?: string;
  metadata?: Record<string, string>;
}

/**
 * An S3 bucket. Takes its client; objects are written with SSE (AES-256 unless the bucket's
 * default is KMS), and integrity is checked by the SDK's default checksums.
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
      if (!out.Body) throw new Error(`s3://${bucket}/${key} has no body`);
      return out.Body.transformToString("utf8");
    },
  };
}
