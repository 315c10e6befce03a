import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import type { ItemKey } from "@webhook-backend/stream/projections/types";
import { ItemLimitError } from "../platform/errors";
import { emptyAttributeName } from "../platform/tables";
import type { ItemStore } from "../ports/item-store";

/**
 * An `ItemStore` in memory with the DynamoDB adapter's semantics (a write only when the state
 * changed; values as DynamoDB keeps them: JSON, undefined dropped): a stream consumer's copy of
 * the tables (`shared/stream/consumer.ts`) and the tests' fast projections.
 *
 * @example const groups = memoryItemStore<GroupState>(); await groups.apply(key, update); groups.items.size // 1
 */
export function memoryItemStore<S>(): ItemStore<S> & { items: Map<string, S> } {
  const items = new Map<string, S>();
  const id = (key: ItemKey) => `${key.pk}|${key.sk ?? ""}`;
  const apply = async (key: ItemKey, update: (state: S | null) => S) => {
    const before = structuredClone(items.get(id(key)) ?? null);
    const after = update(structuredClone(before));
    if (before !== null && canonicalJson(after) === canonicalJson(before)) return { before, after: before };
    // As DynamoDB: an empty map key is refused (#57), so the fast property runs meet that limit too.
    const empty = emptyAttributeName(after);
    if (empty) throw new ItemLimitError(`item ${key.pk.slice(0, 200)}: ${empty}`);
    items.set(id(key), JSON.parse(JSON.stringify(after)));
    return { before, after };
  };
  return {
    items,
    async get(key) {
      return structuredClone(items.get(id(key)) ?? null);
    },
    apply,
    async applyMany(updates) {
      return Promise.all(
        updates.map(({ key, update }) =>
          apply(key, update).then(
            (result) => ({ ok: true as const, ...result }),
            (error: unknown) => ({ ok: false as const, error }),
          ),
        ),
      );
    },
  };
}
