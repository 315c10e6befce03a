import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { BodyReader } from "./body.ts";

/**
 * The S3 body reader (`@webhook-backend/stream/s3`, the only module that needs
 * `@aws-sdk/client-s3`, an optional peer dependency): reads a body the envelope points to from the
 * data bucket (the consumer's role needs `s3:GetObject` on `oversize/*`, and the bucket key's
 * `kms:Decrypt`).
 *
 * @example const copy = streamCopy(s3BodyReader(new S3Client({})))
 */
export function s3BodyReader(s3: S3Client): BodyReader {
  return async ({ bucket, key }) => {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return (await out.Body?.transformToString("utf8")) ?? "";
  };
}
