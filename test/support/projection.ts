import { memoryItemStore } from "../../shared/adapters/memory-item-store";
import { parseWebhookEvent } from "../../shared/events/schemas";
import { canonicalJson } from "../../shared/projections/canonical-json";
import type { GroupState } from "../../shared/projections/groups";
import type { MembershipState } from "../../shared/projections/memberships";
import type { PresenceState } from "../../shared/projections/presence";
import type { SessionState } from "../../shared/projections/sessions";
import type { ItemKey, ProjectionInput } from "../../shared/projections/types";
import {
  type ProjectionStores,
  type ProjectorDependencies,
  projectBatch,
  projectionInput,
  projectKnownEvent,
} from "../../shared/projector/core";
import { PROJECTIONS } from "../../shared/projector/registry";
import { factFields } from "../../shared/stream/consumer";
import type { TableChecks } from "../../tools/simulate/check";
import type { Delivery } from "./histories";
import { memoryStore, recordingQueue } from "./ingest";

/** An in-memory ItemStore with the DynamoDB adapter's semantics, for fast pure-level tests. */
export { memoryItemStore };

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

/**
 * Projects deliveries cut into batches of the given sizes (cycled), through the projector's fold
 * (`projectBatch`), by `workers` concurrent workers taking the next batch as they free up.
 */
export async function projectInBatches(
  deliveries: readonly Delivery[],
  sizes: readonly number[],
  deps: ProjectorDependencies,
  workers = 1,
): Promise<void> {
  const batches: Delivery[][] = [];
  for (let i = 0, b = 0; i < deliveries.length; b++) {
    const size = Math.max(1, sizes[b % sizes.length] ?? 1);
    batches.push(deliveries.slice(i, i + size));
    i += size;
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let batch = batches[next++]; batch; batch = batches[next++]) {
        const results = await projectBatch(
          batch.map((d, i) => ({ ...d, messageId: `m${i}`, trigger: "", appId: undefined })),
          deps,
        );
        const failed = results.find((r) => "error" in r);
        if (failed && "error" in failed) throw failed.error;
      }
    }),
  );
}

/**
 * The access patterns the simulator's check reads, over in-memory stores: the same answers as the
 * DynamoDB queries (current members only, users online), for property tests that run hundreds of
 * histories. The DynamoDB Local suite checks the real queries.
 */
export function memoryChecks(stores: ReturnType<typeof memoryStores>): TableChecks {
  const all = <S>(name: keyof ProjectionStores) => [...stores[name].items.values()] as S[];
  const members = () => all<MembershipState>("memberships").filter((m) => m.status === "member");
  return {
    group: async (appId, guid) => all<GroupState>("groups").find((g) => g.appId === appId && g.guid === guid),
    members: async (appId, guid) => members().filter((m) => m.appId === appId && m.guid === guid),
    groupsOf: async (appId, uid) => members().filter((m) => m.appId === appId && m.uid === uid),
    online: async (appId) =>
      all<PresenceState>("presence").filter((p) => p.appId === appId && p.status === "online"),
    session: async (appId, sessionId) =>
      all<SessionState>("sessions").find((s) => s.appId === appId && s.sessionId === sessionId),
  };
}

/** Every item key a history touches, per table. */
export function touchedKeys(deliveries: readonly Delivery[]) {
  const keys = new Map<keyof ProjectionStores, Map<string, ItemKey>>();
  const projections = Object.entries(PROJECTIONS) as Array<
    [keyof ProjectionStores, (typeof PROJECTIONS)[keyof ProjectionStores]]
  >;
  for (const d of deliveries) {
    const parsed = parseWebhookEvent(JSON.parse(d.body));
    if (parsed.kind !== "known") continue;
    const input = projectionInput(parsed.event, d.eventId, d.receivedAt);
    for (const [table, projection] of projections) {
      if (!projection.handles(parsed.event)) continue;
      for (const key of projection.keys(input as never)) {
        const set = keys.get(table) ?? new Map();
        set.set(`${key.pk}|${key.sk ?? ""}`, key);
        keys.set(table, set);
      }
    }
  }
  return keys;
}

/**
 * The items a history touches, read back, as one comparable string: their fact-derived fields
 * (`factFields`: the bookkeeping, such as the runner-ups an item keeps, depends on the order).
 */
export async function readTables(stores: ProjectionStores, deliveries: readonly Delivery[]): Promise<string> {
  const out: Record<string, unknown> = {};
  for (const [table, keys] of touchedKeys(deliveries)) {
    for (const [id, key] of keys) {
      const item = await stores[table].get(key);
      out[`${table}:${id}`] = item === null ? null : factFields(table, item);
    }
  }
  return canonicalJson(out);
}

/** The contents of in-memory stores, their fact-derived fields only (`factFields`), as one comparable string. */
export function factSnapshot(stores: ReturnType<typeof memoryStores>): string {
  return canonicalJson(
    Object.fromEntries(
      Object.entries(stores).map(([table, store]) => [
        table,
        Object.fromEntries(
          [...store.items]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([id, item]) => [id, factFields(table as keyof ProjectionStores, item as object)]),
        ),
      ]),
    ),
  );
}

/**
 * The items whose fact-derived fields differ between two sets of in-memory tables, each as
 * `<table> <id>` with both versions: an empty list when they agree (a readable failure otherwise).
 */
export function factDifferences(
  actual: ReturnType<typeof memoryStores>,
  expected: ReturnType<typeof memoryStores>,
): string[] {
  const out: string[] = [];
  for (const table of Object.keys(expected) as Array<keyof ProjectionStores>) {
    const ids = new Set([...actual[table].items.keys(), ...expected[table].items.keys()]);
    for (const id of [...ids].sort()) {
      const facts = (s: ReturnType<typeof memoryStores>) => {
        const item = s[table].items.get(id);
        return item === undefined ? "absent" : canonicalJson(factFields(table, item as object));
      };
      if (facts(actual) !== facts(expected))
        out.push(`${table} ${id}:\n  got      ${facts(actual)}\n  expected ${facts(expected)}`);
    }
  }
  return out;
}
