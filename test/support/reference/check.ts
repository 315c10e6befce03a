import { factFields } from "@webhook-backend/stream";
import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import type { ProjectionTableName } from "@webhook-backend/stream/projections/keys";
import { countings, factsOf, type ReceivedCopy } from "./facts";
import { type ReconcileFact, referenceTables } from "./tables";

/*
 * The check (#57): a state (the projector's tables, a subscriber's copy, the tables after reconcile)
 * against the reference. Each item is compared on its fact-derived fields (`factFields`) without
 * `versions` (an encoding of the order, which the reference states as the rules themselves); an
 * item is right when it is one of the items the documents allow.
 */

const TABLES: readonly ProjectionTableName[] = ["groups", "memberships", "presence", "sessions"];

/** An item as compared: fact fields, no versions, as canonical JSON (absent fields dropped). */
export function comparable(table: ProjectionTableName, item: object): string {
  const { versions: _versions, ...fields } = factFields(table, item);
  return canonicalJson(fields);
}

/** What the reference is given: the deliveries received, reconcile's facts, the erased users' pseudonyms. */
export interface ReferenceInput {
  deliveries: readonly ReceivedCopy[];
  reconciled?: readonly ReconcileFact[];
  erased?: readonly string[];
}

/** Per table and item id, the comparable items the documents allow (over every counting of the facts). */
export function allowedItems(input: ReferenceInput): Map<string, Set<string>> {
  const allowed = new Map<string, Set<string>>();
  for (const facts of countings(factsOf(input.deliveries))) {
    const tables = referenceTables(facts, input.reconciled, input.erased);
    for (const table of TABLES)
      for (const [id, items] of tables[table]) {
        const key = `${table} ${id}`;
        const set = allowed.get(key) ?? new Set<string>();
        for (const item of items) set.add(comparable(table, item));
        allowed.set(key, set);
      }
  }
  return allowed;
}

/** A state to check: per table, its items by `pk|sk`. */
export type StateItems = { [T in ProjectionTableName]: Map<string, unknown> };

/**
 * The items of `state` the documents do not allow, and the items they expect that `state` lacks,
 * each as a readable line: an empty list when the state is right. `only` restricts the check to
 * some apps' items (a copy that holds one app).
 */
export function referenceDifferences(
  what: string,
  state: StateItems,
  allowed: Map<string, Set<string>>,
  only?: (id: string) => boolean,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const table of TABLES)
    for (const [id, item] of state[table]) {
      if (only && !only(id)) continue;
      const key = `${table} ${id}`;
      seen.add(key);
      const got = comparable(table, item as object);
      const options = allowed.get(key);
      if (!options) out.push(`${what}: ${key} is not an item of the facts:\n  got      ${got}`);
      else if (!options.has(got))
        out.push(`${what}: ${key}:\n  got      ${got}\n  expected ${[...options].join("\n  or       ")}`);
    }
  for (const key of allowed.keys())
    if (!seen.has(key) && (!only || only(key.slice(key.indexOf(" ") + 1))))
      out.push(`${what}: ${key} is missing`);
  return out;
}
