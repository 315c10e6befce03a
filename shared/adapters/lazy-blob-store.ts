import type { BlobStore } from "../ports/blob-store";

/**
 * A `BlobStore` that builds its adapter on first use: `load` runs once, at the first call, and
 * every call goes to what it returned. With a dynamic `import()` in `load`, the adapter's code (the
 * S3 client, ~150 KB of SDK) is bundled in a chunk of its own and loaded only by the request that
 * needs it, not at cold start. A failed load is not remembered: the next call tries again.
 *
 * @example
 * const store = lazyBlobStore(bucket, async () => {
 *   const [{ s3BlobStore }, { s3Client }] = await Promise.all([import("./s3-blob-store"), import("../platform/s3-client")]);
 *   return s3BlobStore(s3Client(config.aws), bucket);
 * });
 */
export function lazyBlobStore(bucket: string, load: () => Promise<BlobStore>): BlobStore {
  let loading: Promise<BlobStore> | undefined;
  const store = () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
  return {
    bucket,
    put: async (key, body, options) => (await store()).put(key, body, options),
    getText: async (key) => (await store()).getText(key),
    getBytes: async (key) => (await store()).getBytes(key),
  };
}
