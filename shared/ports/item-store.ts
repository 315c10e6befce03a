import type { ItemKey } from "@webhook-backend/stream/projections/types";

/** How an update of one item ended: the state before and after (the same object when nothing was written). */
export interface ApplyResult<S> {
  before: S | null;
  after: S;
}

/** One item's update in a batch: the keys of a batch are distinct. */
export interface ItemUpdate<S> {
  key: ItemKey;
  update: (state: S | null) => S;
}

/** How one item of a batch ended: applied (written or unchanged), or failed with why. */
export type ItemOutcome<S> = ({ ok: true } & ApplyResult<S>) | { ok: false; error: unknown };

/** Read-evolve-write access to the items of one projection table. Adapter: `adapters/dynamo-item-store`. */
export interface ItemStore<S> {
  /**
   * Applies a pure update to the item at `key`. Writes only when the state changes (a duplicate
   * or stale event costs a read and no write), conditionally on the item's revision: a concurrent
   * writer makes it re-read and re-apply, so no update is ever lost. Gives up with an
   * `ItemContentionError` (retryable) when the item keeps changing.
   */
  apply(key: ItemKey, update: (state: S | null) => S): Promise<ApplyResult<S>>;
  /**
   * `apply` for many distinct items at once: one read for all of them (batched), then one
   * conditional write per item whose state changed, items in parallel with a bound. A conflict
   * re-reads and re-applies that item alone; a failed batched read (throttling) makes each item
   * read itself. Never rejects: each item's outcome says how it ended, and an item fails only on
   * its own read or write (a throttled one is retried by redelivering its events).
   */
  applyMany(updates: readonly ItemUpdate<S>[]): Promise<ItemOutcome<S>[]>;
  get(key: ItemKey): Promise<S | null>;
}
