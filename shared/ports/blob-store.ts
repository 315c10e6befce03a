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
}
