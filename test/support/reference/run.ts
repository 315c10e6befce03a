import { createHash } from "node:crypto";
import {
  type DeliveryIdStore,
  type ErasureNotice,
  memoryErasureState,
  STREAM_KINDS,
  STREAM_SCHEMA_VERSION,
  streamBatchProcessor,
  streamCopy,
} from "@webhook-backend/stream";
import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import { itemErasure, mentionsUid, redactBody } from "../../../shared/erasure/redact";
import type { ItemStore } from "../../../shared/ports/item-store";
import type { ProjectorDependencies } from "../../../shared/projector/core";
import type { ReconcileFactRecord, ReconcileFactSink } from "../../../shared/reconcile/fact-sink";
import { reconcilePresence } from "../../../shared/reconcile/reconcile";
import { deliveryEnvelope, streamMessage } from "../../../shared/stream/envelope";
import { reconcileEnvelope } from "../../../shared/stream/reconcile-facts";
import type { BusyHistory } from "../busy-traffic";
import type { Delivery } from "../histories";
import { projectInBatches } from "../projection";
import { allowedItems, referenceDifferences, type StateItems } from "./check";
import type { ReconcileFact } from "./tables";

/*
 * One run of the one-state property against the reference (#57): a busy history processed in a
 * drawn order and batching by the projector (memory or DynamoDB Local stores), with reconcile runs
 * at drawn points; a subscriber's copy built by the package exactly as its README shows it
 * (`streamBatchProcessor` with a durable id store, `streamCopy`, `onErasure: copy.erase`), fed what
 * the projector published in the order it published it; then, if drawn, a user's erasure, its
 * notice and a replay of the archive (the redacted lines) to the subscriber. Three things are
 * checked against the reference, never against each other: the tables after each reconcile and at
 * the end, the copy at the end, and both after the erasure and the replay.
 */

/** The tables a run writes: the projector's dependencies and a way to read every item back. */
export interface RunTables {
  deps: ProjectorDependencies;
  /** Every item of each table, by `pk|sk`. */
  read(): Promise<StateItems>;
  /** Applies the erasure's rule to every item (`itemErasure`); absent where the run cannot (it then checks no erasure). */
  erase?(redaction: Parameters<typeof itemErasure>[2]): Promise<void>;
}

/** A delivery id store that outlives a processor (the README's durable store: a cold start keeps it). */
function durableIdStore(): DeliveryIdStore {
  const ids = new Set<string>();
  return { has: (id) => ids.has(id), add: (id) => void ids.add(id) };
}

/** The presence store reconcile writes through, recording which items it applied a fact to. */
function recording(store: ItemStore<PresenceState>, applied: string[]): ItemStore<PresenceState> {
  return {
    ...store,
    applyMany: (updates) => {
      applied.push(...updates.map((u) => u.key.pk));
      return store.applyMany(updates);
    },
  };
}

/**
 * Reconcile's way out (#57 item 4) as the stream's sink takes it: the facts that changed an item,
 * kept in the order a run hands them over, to be published to the subscriber (and replayed after
 * an erasure, as `replay --to-subscriber` sends `reconcile/` again).
 */
function publishedFacts(published: ReconcileFactRecord[]): ReconcileFactSink {
  return {
    record: async (_appId, facts) => {
      published.push(...facts);
      return { published: facts.length, unpublished: 0 };
    },
  };
}

/** The stream message body of a reconcile fact (`kind: "reconcile"`), as the sink publishes it. */
function reconcileMessageOf(fact: ReconcileFactRecord, erasure?: string): string {
  return streamMessage(reconcileEnvelope({ ...fact, ...(erasure ? { erasure } : {}) })).body;
}

const presenceOf = (status: string | undefined) =>
  status === "online" || status === "available" ? "online" : status === "offline" ? "offline" : undefined;

/** Runs `history` in `order`, cut by `sizes`; returns every difference from the reference (none: right). */
export async function runAgainstReference(
  history: BusyHistory,
  order: readonly Delivery[],
  sizes: readonly number[],
  tables: RunTables,
): Promise<string[]> {
  const { appId } = history;
  const problems: string[] = [];
  const ofApp = (id: string) => id.startsWith(`${appId}#`);
  const handled = durableIdStore();
  // The README's durable stores: the ids handled and the erasures acted on outlive a container.
  const erasures = memoryErasureState();
  const copy = streamCopy();
  const subscriber = () =>
    streamBatchProcessor({
      onDelivery: (d) => copy.apply([d]),
      onReconcile: (f) => copy.apply([f]),
      onErasure: async (n) => copy.erase(n),
      handled,
      erasures,
    });
  let consumer = subscriber();
  const send = async (messages: string[]) => {
    const records = messages.map((body, i) => ({ messageId: `m${i}`, body }));
    const { batchItemFailures } = await consumer({ Records: records });
    if (batchItemFailures.length) problems.push(`copy: ${batchItemFailures.length} record(s) failed`);
  };
  const batches: Delivery[][] = [];
  for (let i = 0, b = 0; i < order.length; b++) {
    const size = Math.max(1, sizes[b % sizes.length] ?? 1);
    batches.push(order.slice(i, i + size));
    i += size;
  }
  const reconciled: ReconcileFact[] = [];
  const processed: Delivery[] = [];
  const published: ReconcileFactRecord[] = [];
  const runs = [...history.reconciles].sort(
    (a, b) => (a.at % (batches.length + 1)) - (b.at % (batches.length + 1)),
  );
  const reconcileAt = async (index: number) => {
    for (const run of runs.filter((r) => r.at % (batches.length + 1) === index)) {
      const applied: string[] = [];
      const state = await tables.read();
      const onlineHere = [...state.presence.values()]
        .map((p) => p as PresenceState)
        .filter((p) => p.appId === appId && p.status === "online")
        .map((p) => p.uid);
      const before = published.length;
      await reconcilePresence({
        appId,
        listing: { users: run.users, complete: run.complete, pages: 1 },
        fetchedAt: run.fetchedAt,
        onlineHere,
        presence: recording(tables.deps.stores.presence, applied),
        facts: publishedFacts(published),
      });
      for (const pk of applied) {
        const uid = pk.slice(appId.length + 1);
        const listed = run.users.find((u) => u.uid === uid && presenceOf(u.status));
        const status = (presenceOf(listed?.status) ?? "offline") as "online" | "offline";
        reconciled.push({
          appId,
          uid,
          status,
          listed: listed
            ? {
                name: listed.name,
                avatar: listed.avatar,
                role: listed.role,
                lastActiveAt: listed.lastActiveAt,
              }
            : {},
          fetchedAt: run.fetchedAt,
          // The fact's id as reconcile names it: only a tie at the same ms and receipt reads it.
          eventId: createHash("sha256")
            .update(`${appId}|reconcile|${run.fetchedAt}|${uid}|${status}`)
            .digest("hex"),
        });
      }
      await send(published.slice(before).map((f) => reconcileMessageOf(f)));
      // The state after reconcile: the facts processed so far and reconcile's.
      problems.push(
        ...referenceDifferences(
          `after reconcile at ${run.fetchedAt}`,
          await tables.read(),
          allowedItems({ deliveries: processed, reconciled }),
          ofApp,
        ),
      );
    }
  };
  for (const [index, batch] of batches.entries()) {
    await reconcileAt(index);
    await projectInBatches(batch, [batch.length], tables.deps);
    processed.push(...batch);
    // What the projector publishes once the batch's tables are written, to the subscriber's queue.
    await send(batch.map((d) => envelopeOf(d, appId)));
  }
  await reconcileAt(batches.length);
  const expected = allowedItems({ deliveries: history.deliveries, reconciled });
  problems.push(...referenceDifferences("tables", await tables.read(), expected, ofApp));
  problems.push(...referenceDifferences("copy", copy.items, expected, ofApp));
  if (history.erase === undefined || !tables.erase) return problems;

  // A user's erasure: the tables rewritten by its rule, its notice to the subscriber, then a replay
  // of the archive (every delivery, the lines naming the user redacted) to the subscriber.
  const uid = history.erase;
  const pseudonym = `erased-${createHash("sha256").update(uid).digest("hex").slice(0, 12)}`;
  const redaction = { uid, names: [], sessions: [], pseudonym };
  const erasureId = `erasure-${uid}`;
  await tables.erase(redaction);
  const notice: ErasureNotice = {
    schemaVersion: STREAM_SCHEMA_VERSION,
    kind: STREAM_KINDS.erasure,
    id: erasureId,
    appId,
    scope: "user",
    pseudonym,
    finishedAt: T_ERASED,
  };
  await send([JSON.stringify(notice)]);
  const archive = [...new Map(history.deliveries.map((d) => [`${d.eventId}@${d.receivedAt}`, d])).values()];
  const redacted = archive.map((d) =>
    mentionsUid(d.body, uid) ? { ...d, body: redactBody(d.body, redaction) } : d,
  );
  consumer = subscriber(); // the replay reaches a new container: only the durable id store remains
  await send(
    redacted.map((d, i) => envelopeOf(d, appId, d.body === archive[i]?.body ? undefined : erasureId)),
  );
  // `replay --to-subscriber` sends `reconcile/` again too, its lines naming the user redacted by `forget`.
  await send(
    published.map((f) =>
      mentionsUid(f.body, uid)
        ? reconcileMessageOf({ ...f, body: redactBody(f.body, redaction) }, erasureId)
        : reconcileMessageOf(f),
    ),
  );
  const after = allowedItems({
    deliveries: redacted,
    reconciled: reconciled.filter((r) => r.uid !== uid),
    erased: [pseudonym],
  });
  problems.push(...referenceDifferences("tables after the erasure", await tables.read(), after, ofApp));
  problems.push(...referenceDifferences("copy after the erasure and the replay", copy.items, after, ofApp));
  return problems;
}

const T_ERASED = 1_800_000_000_000;

/** The stream message body the projector (or a replay) publishes for a delivery. */
function envelopeOf(d: Delivery, appId: string, erasure?: string): string {
  const trigger = String((JSON.parse(d.body) as { trigger?: unknown }).trigger ?? "");
  return streamMessage(deliveryEnvelope({ ...d, trigger, appId, ...(erasure ? { erasure } : {}) })).body;
}

/** A run's tables in memory (`memoryStores`), the erasure applied item by item. */
export function memoryRunTables(
  stores: { [T in keyof StateItems]: { items: Map<string, unknown> } },
  deps: ProjectorDependencies,
): RunTables {
  return {
    deps,
    read: async () => ({
      groups: stores.groups.items,
      memberships: stores.memberships.items,
      presence: stores.presence.items,
      sessions: stores.sessions.items,
    }),
    erase: async (redaction) => {
      for (const store of Object.values(stores))
        for (const [id, item] of [...store.items]) {
          // The erasure's plan hands it the user's own presence, and the items naming them.
          if (store === stores.presence && (item as { uid?: string }).uid !== redaction.uid) continue;
          const next = itemErasure(tableOf(stores, store), item as Record<string, unknown>, redaction);
          if (next === null) store.items.delete(id);
          else if (next !== undefined) store.items.set(id, next);
        }
    },
  };
}

function tableOf(stores: Record<string, unknown>, store: unknown): string {
  return Object.entries(stores).find(([, s]) => s === store)?.[0] ?? "";
}
