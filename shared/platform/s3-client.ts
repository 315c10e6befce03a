import { S3Client } from "@aws-sdk/client-s3";
import { type AwsClientSettings, clientOptions } from "./aws-clients";

/**
 * The S3 client, in a module of its own (see `aws-clients.ts`): the ingest imports it only on the
 * oversize path, with a dynamic `import()`.
 *
 * @example const s3 = s3Client(config.aws)
 */
export function s3Client(settings: AwsClientSettings): S3Client {
  // An emulator serves path-style URLs (no wildcard DNS for virtual-hosted buckets).
  return new S3Client({
    ...clientOptions(settings, settings.endpoint),
    ...(settings.endpoint ? { forcePathStyle: true } : {}),
  });
}
