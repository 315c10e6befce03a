import type { ItemKey } from "@webhook-backend/stream/projections/types";
import type { ItemStore } from "../../shared/ports/item-store";
import { type ProjectionStores, storeOf, storesByTable } from "../../shared/projector/registry";

/**
 * A store that reads the items as they are and keeps every update in memory, writing nothing:
 * the projector's own core (`projectInputs`: evolveOnce, the seen-free comparison) run over it
 * predicts each event's outcome, and a later event of the same run sees what an earlier one would
 * have written. One GetItem per item touched.
 */
function dryRunStore<S>(store: ItemStore<S>): ItemStore<S> {
  const overlay = new Map<string, S | null>();
  const id = (key: ItemKey) => `${key.pk}|${key.sk ?? ""}`;
  const get = async (key: ItemKey) => {
    if (!overlay.has(id(key))) overlay.set(id(key), await store.get(key));
    return overlay.get(id(key)) ?? null;
  };
  const apply = async (key: ItemKey, update: (state: S | null) => S) => {
    const before = await get(key);
    const after = update(before);
    overlay.set(id(key), after);
    return { before, after };
  };
  return {
    get,
    apply,
    applyMany: (updates) =>
      Promise.all(
        updates.map(({ key, update }) =>
          apply(key, update).then(
            (result) => ({ ok: true as const, ...result }),
            (error: unknown) => ({ ok: false as const, error }),
          ),
        ),
      ),
  };
}

/** The projection stores of a dry run: read as they are, written nowhere. */
export function dryRunStores(stores: ProjectionStores): ProjectionStores {
  return storesByTable((table) => dryRunStore(storeOf(stores, table)));
}
