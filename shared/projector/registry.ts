import type { KnownEvent } from "@webhook-backend/stream/events/schemas";
import { byTable, PROJECTION_TABLE_NAMES, type ProjectionTableName } from "../platform/tables";
import type { ItemStore } from "../ports/item-store";
import { groupsProjection } from "../projections/groups";
import { membershipsProjection } from "../projections/memberships";
import { presenceProjection } from "../projections/presence";
import { sessionsProjection } from "../projections/sessions";
import type { Fallbacks, Projection, SeenEvents } from "../projections/types";
import type { Version } from "../projections/version";

/**
 * Each projection table's projection: the pure evolve the projector folds into it. With the
 * table's declaration (`PROJECTION_TABLES`, shared/platform/tables.ts), this is all a table takes:
 * the projector, the stores, `trace`, the dry run and the CLIs iterate the two. It lives here, not
 * in platform/, because it binds the projections (a layer above the platform) to their tables.
 */
export const PROJECTIONS = {
  groups: groupsProjection,
  memberships: membershipsProjection,
  presence: presenceProjection,
  sessions: sessionsProjection,
} as const satisfies Record<ProjectionTableName, Projection<VersionedItem, KnownEvent>>;

/** An item whose parts each keep the version of the fact that wrote them (and, some, their runner-up). */
export type VersionedItem = {
  pk: string;
  seen?: SeenEvents;
  versions: Partial<Record<string, Version>>;
  fallback?: Fallbacks;
};

/** The state of a table's items, as its projection evolves them. */
export type StateOf<N extends ProjectionTableName> =
  (typeof PROJECTIONS)[N] extends Projection<infer S, infer _E> ? S : never;

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
