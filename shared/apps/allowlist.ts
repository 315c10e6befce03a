/**
 * Which apps may deliver, when a deployment restricts them: the ingest asks once per app and
 * remembers the answer, so a delivery costs no read of the store (`APPS_TABLE`) but the first of
 * an app in a container and one per app per cache lifetime after that.
 *
 * Port: `AppAllowlist`. Store: `AllowedAppLookup` (adapter `./dynamo-allowlist`, one GetItem).
 */
export interface AppAllowlist {
  /** Whether `appId` may deliver; throws when the store could not answer and nothing is cached. */
  allows(appId: string): Promise<boolean>;
}

/** One read of the store: whether the app has an `allowed` record. */
export type AllowedAppLookup = (appId: string) => Promise<boolean>;

export interface CachedAllowlistOptions {
  /** How long an allowed app is remembered, ms (a revoked app is refused this long after at most). */
  allowedTtlMs: number;
  /**
   * How long a refused app is remembered, ms: short, so an app `connect` just allowed is accepted
   * within it, and long enough that a sender's burst of refused deliveries reads once.
   */
  refusedTtlMs: number;
  /** Apps remembered at most (the oldest read is forgotten first). @default 20_000 */
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  allowed: boolean;
  readAt: number;
}

/**
 * An allowlist over one read per app per lifetime. Concurrent first deliveries of an app share one
 * read; when a re-read fails, the last answer stands (a store fault refuses nothing it accepted a
 * minute ago); when the first read fails, the error goes to the caller (the ingest answers 503, and
 * the platform retries).
 *
 * @example
 * const allowlist = cachedAllowlist(dynamoAllowedAppLookup(client, table), { allowedTtlMs: 60_000, refusedTtlMs: 5_000 });
 * await allowlist.allows("app1") // true, read once
 */
export function cachedAllowlist(lookup: AllowedAppLookup, options: CachedAllowlistOptions): AppAllowlist {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 20_000;
  // A Map keeps insertion order: re-inserting on every read makes its first key the oldest read.
  const entries = new Map<string, Entry>();
  const reading = new Map<string, Promise<boolean>>();

  const remember = (appId: string, allowed: boolean) => {
    entries.delete(appId);
    entries.set(appId, { allowed, readAt: now() });
    if (entries.size > maxEntries) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) entries.delete(oldest);
    }
  };
  const read = (appId: string, stale: Entry | undefined): Promise<boolean> => {
    const pending = reading.get(appId);
    if (pending) return pending;
    const started = lookup(appId).then(
      (allowed) => {
        remember(appId, allowed);
        return allowed;
      },
      (error: unknown) => {
        if (stale) return stale.allowed;
        throw error;
      },
    );
    const settled = started.finally(() => reading.delete(appId));
    reading.set(appId, settled);
    return settled;
  };

  return {
    allows: async (appId) => {
      const entry = entries.get(appId);
      if (entry) {
        const ttl = entry.allowed ? options.allowedTtlMs : options.refusedTtlMs;
        if (now() - entry.readAt < ttl) return entry.allowed;
      }
      return read(appId, entry);
    },
  };
}

/** Every app allowed: the deployment does not restrict apps (the credentials still may). */
export const ANY_APP: AppAllowlist = { allows: async () => true };
