import { parseWebhookEvent } from "../../shared/events/schemas";
import type { ItemStore } from "../../shared/ports/item-store";
import { canonicalJson } from "../../shared/projections/canonical-json";
import type { ProjectionInput } from "../../shared/projections/types";
import {
  type ProjectionStores,
  type ProjectorDependencies,
  projectionInput,
  projectKnownEvent,
} from "../../shared/projector/core";
import type { Delivery } from "./histories";
import { memoryStore, recordingQueue } from "./ingest";

/** An in-memory ItemStore with the DynamoDB adapter's semantics, for fast pure-level tests. */
export function memoryItemStore<S>(): ItemStore<S> & { items: Map<string, S> } {
  const items = new Map<string, S>();
  const id = (key: { pk: string; sk?: string }) => `${key.pk}|${key.sk ?? ""}`;
  return {
    items,
    async get(key) {
      return structuredClone(items.get(id(key)) ?? null);
    },
    async apply(key, update) {
      const before = structuredClone(items.get(id(key)) ?? null);
      const after = update(structuredClone(before));
      if (before !== null && canonicalJson(after) === canonicalJson(before)) return { before, after: before };
      items.set(id(key), JSON.parse(JSON.stringify(after)));
      return { before, after };
    },
  };
}

export function memoryStores() {
  return {
    groups: memoryItemStore(),
    memberships: memoryItemStore(),
    presence: memoryItemStore(),
    sessions: memoryItemStore(),
  } as ProjectionStores & { [K in keyof ProjectionStores]: { items: Map<string, unknown> } };
}

export function memoryDeps(stores: ProjectionStores = memoryStores()): ProjectorDependencies {
  return { stores, dataStore: memoryStore(), recordingJobs: recordingQueue(), now: () => 1_700_000_000_000 };
}

/** Parses a fixture or delivery into a projection input. */
export function inputOf(json: unknown, receivedAt = 1_700_000_000_000, eventId = "e1"): ProjectionInput {
  const parsed = parseWebhookEvent(json);
  if (parsed.kind !== "known") throw new Error(`not a known event: ${JSON.stringify(parsed).slice(0, 300)}`);
  return projectionInput(parsed.event, eventId, receivedAt);
}

/** Projects deliveries one after the other through the real projector core. */
export async function projectAll(
  deliveries: readonly Delivery[],
  deps: ProjectorDependencies,
): Promise<string[]> {
  const outcomes: string[] = [];
  for (const d of deliveries) {
    const parsed = parseWebhookEvent(JSON.parse(d.body));
    if (parsed.kind !== "known") throw new Error(`generated an invalid event: ${JSON.stringify(parsed)}`);
    outcomes.push(await projectKnownEvent(parsed.event, d, deps));
  }
  return outcomes;
}

/** The contents of in-memory stores as one comparable string. */
export function snapshot(stores: ReturnType<typeof memoryStores>): string {
  return canonicalJson(
    Object.fromEntries(
      Object.entries(stores).map(([name, store]) => [name, Object.fromEntries([...store.items].sort())]),
    ),
  );
}
