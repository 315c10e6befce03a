import type { KnownEvent } from "@webhook-backend/stream/events/schemas";
import { PROJECTION_TABLE_NAMES, type ProjectionTableName } from "@webhook-backend/stream/projections/keys";
import { PROJECTIONS, type StateOf, type VersionedItem } from "@webhook-backend/stream/projections/registry";
import type { Projection } from "@webhook-backend/stream/projections/types";
import { byTable } from "../platform/tables";
import type { ItemStore } from "../ports/item-store";

/*
 * Each projection table's projection (`PROJECTIONS`, with `VersionedItem` and `StateOf`) is the
 * stream package's: the projections are pure, and consumers fold with them. This binds each to
 * its store: the projector, `trace`, the dry run and the CLIs iterate the two.
 */

/** One item store per projection table. */
export type ProjectionStores = { [N in ProjectionTableName]: ItemStore<StateOf<N>> };

/** A table's projection and store, typed alike for code that treats every table the same way. */
export interface TableBinding {
  table: ProjectionTableName;
  projection: Projection<VersionedItem, KnownEvent>;
  store: ItemStore<VersionedItem>;
}

/**
 * Every projection table with its projection and its store, in declaration order.
 *
 * @example for (const { projection, store } of tableBindings(stores)) await store.get(projection.keys(input)[0])
 */
export function tableBindings(stores: ProjectionStores): TableBinding[] {
  return PROJECTION_TABLE_NAMES.map((table) => ({
    table,
    projection: PROJECTIONS[table],
    store: storeOf(stores, table),
  }));
}

/** A table's store, typed as the code that treats every table alike sees it. */
export function storeOf(stores: ProjectionStores, table: ProjectionTableName): ItemStore<VersionedItem> {
  // Each store holds its own table's states (the record's types say so per key); this forgets
  // which, as the code given it (the fold, trace, the dry run) is generic over the state.
  return stores[table] as unknown as ItemStore<VersionedItem>;
}

/**
 * A store per projection table, each made from the table's name (the stores' state types follow
 * the projections).
 *
 * @example storesByTable((table) => dynamoItemStore(doc, PROJECTION_TABLES[table], names[table]))
 */
export function storesByTable(
  store: (table: ProjectionTableName) => ItemStore<VersionedItem>,
): ProjectionStores {
  // An item store is generic in its state and keeps what it is given: typed per table by the caller.
  return byTable((table) => store(table)) as unknown as ProjectionStores;
}
