import type { ItemKey } from "../projections/types";

/** How an update of one item ended: the state before and after (the same object when nothing was written). */
export interface ApplyResult<S> {
  before: S | null;
  after: S;
}

/** Read-evolve-write access to the items of one projection table. Adapter: `adapters/dynamo-item-store`. */
export interface ItemStore<S> {
  /**
   * Applies a pure update to the item at `key`. Writes only when the state changes (a duplicate
   * or stale event costs a read and no write), conditionally on the item's revision: a concurrent
   * writer makes it re-read and re-apply, so no update is ever lost. Gives up with an
   * `ItemContentionError` (retryable) when the item keeps changing.
   */
  apply(key: ItemKey, update: (state: S | null) => S): Promise<ApplyResult<S>>;
  get(key: ItemKey): Promise<S | null>;
}
