import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../shared/projections/canonical-json";
import { factFields } from "../../shared/stream/consumer";
import { type Delivery, namedHistories } from "../support/histories";
import { memoryDeps, memoryStores, projectInBatches } from "../support/projection";

/**
 * One state from one set of facts (#49): the tables are a function of the set of facts, each with
 * its body and its earliest receipt, whatever the order, batching and repetition of processing.
 */

const APP = "2598234fa1e3b9c";
type Stores = ReturnType<typeof memoryStores>;

/** Every order of a list (the lists here have at most 5 entries). */
function permutations<T>(list: readonly T[]): T[][] {
  if (list.length <= 1) return [[...list]];
  return list.flatMap((x, i) =>
    permutations([...list.slice(0, i), ...list.slice(i + 1)]).map((p) => [x, ...p]),
  );
}

/** The tables' fact-derived fields (no bookkeeping), as one comparable string. */
export function factSnapshot(stores: Stores): string {
  return canonicalJson(
    Object.fromEntries(
      Object.entries(stores).map(([table, store]) => [
        table,
        Object.fromEntries(
          [...store.items].sort().map(([id, item]) => [id, factFields(table as never, item as object)]),
        ),
      ]),
    ),
  );
}

async function fold(deliveries: readonly Delivery[], sizes: readonly number[]): Promise<Stores> {
  const stores = memoryStores();
  await projectInBatches(deliveries, sizes, memoryDeps(stores));
  return stores;
}

describe("the four histories of #49, in every processing order", () => {
  it.each(namedHistories(APP).map((h) => [h.name, h] as const))("%s", async (_name, history) => {
    const inReceiptOrder = await fold(history.deliveries, [1]);
    expect(history.shows(inReceiptOrder)).toEqual(history.expected);
    const reference = factSnapshot(inReceiptOrder);
    const wrong: string[] = [];
    for (const order of permutations(history.deliveries))
      for (const sizes of [[1], [order.length]]) {
        const stores = await fold(order, sizes);
        if (factSnapshot(stores) !== reference)
          wrong.push(
            `${order.map((d) => history.deliveries.indexOf(d)).join(",")} / ${sizes}: ${JSON.stringify(history.shows(stores))}`,
          );
      }
    expect(wrong).toEqual([]);
  });
});
