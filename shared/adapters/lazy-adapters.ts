import type { BlobStore } from "../ports/blob-store";
import type { MessageQueue } from "../ports/message-queue";

/**
 * Adapters built on first use. With a dynamic `import()` in `load`, the adapter's code (an SDK
 * client: S3's is ~150 KB) is bundled apart from the start-up code (`infra/bundling.ts`) and
 * loaded by the first call that needs it, not at cold start. Use them only for a path that
 * most invocations never take: the ingest's oversize bodies, the projector's recording jobs.
 */

/**
 * `load` run at the first call and its promise shared by every later call; forgotten if it
 * rejected, so that the next call tries again.
 *
 * @example const client = onFirstUse(async () => (await import("./s3-client")).s3Client(settings))
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}

/**
 * A `BlobStore` whose adapter `load` builds at the first call.
 *
 * @example
 * const store = lazyBlobStore(bucket, async () => (await import("./oversize-store.lazy.mjs")).oversizeStore(aws, bucket))
 */
export function lazyBlobStore(bucket: string, load: () => Promise<BlobStore>): BlobStore {
  const store = onFirstUse(load);
  return {
    bucket,
    put: async (key, body, options) => (await store()).put(key, body, options),
    getText: async (key) => (await store()).getText(key),
    getBytes: async (key) => (await store()).getBytes(key),
    getBytesIfPresent: async (key) => (await store()).getBytesIfPresent(key),
  };
}

/**
 * A `MessageQueue` whose adapter `load` builds at the first send.
 *
 * @example const jobs = lazyMessageQueue(async () => sqsMessageQueue((await import("../platform/sqs-client")).sqsClient(aws), url))
 */
export function lazyMessageQueue(load: () => Promise<MessageQueue>): MessageQueue {
  const queue = onFirstUse(load);
  return { send: async (message) => (await queue()).send(message) };
}
