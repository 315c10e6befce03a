/** What a stored object is: enough to find and verify it. */
export interface StoredObject {
  bucket: string;
  key: string;
  size: number;
}

export interface PutOptions {
  contentType?: string;
  metadata?: Record<string, string>;
}

/** Object storage: oversize bodies, the raw archive and quarantine. Adapter: `adapters/s3-blob-store`. */
export interface BlobStore {
  readonly bucket: string;
  put(key: string, body: Uint8Array | string, options?: PutOptions): Promise<StoredObject>;
  getText(key: string): Promise<string>;
  getBytes(key: string): Promise<Uint8Array>;
  /**
   * An object's bytes, or undefined when it does not exist: for the reads that take a missing
   * object as "not there yet" (S3: `getObjectIfPresent`, which tells absence from a refusal).
   */
  getBytesIfPresent(key: string): Promise<Uint8Array | undefined>;
}
