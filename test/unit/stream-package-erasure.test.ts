import {
  type AppErasures,
  type DeliveryEnvelope,
  type DeliveryIdStore,
  type ErasureNotice,
  type ErasureStateStore,
  factFields,
  PROJECTION_TABLE_NAMES,
  parseStreamMessage,
  type ReconcileFact,
  type SkippedStreamMessage,
  STREAM_SCHEMA_VERSION,
  streamBatchProcessor,
  streamCopy,
  TABLE_KEYS,
  tableItemId,
  UnknownStreamMessageError,
} from "@webhook-backend/stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Redaction, redactArchiveLine } from "../../shared/erasure/redact";
import { PROJECTION_TABLES } from "../../shared/platform/tables";
import { deliveryEnvelope } from "../../shared/stream/envelope";
import { type Delivery, simulatedHistory } from "../support/histories";
import { memoryDeps, memoryStores, projectInBatches } from "../support/projection";

/**
 * The stream package as its README shows it (#57 items 6 and 7, #61 items 12 and 13): a copy
 * kept by `streamBatchProcessor` + `streamCopy` with `onErasure: copy.erase`, durable id and
 * erasure stores (a Map each, outliving the processor: a cold start is a new processor), rebuilt
 * by the replay after an erasure; the own-item rule of a redacted delivery; forward compatibility.
 */

const APP = "app-a";
const PSEUDONYM = "erased-0123456789abcdef";

/** The envelope the projector publishes for a delivery (redacted: `erasure` set). */
function envelopeOf(delivery: Delivery & { erasure?: string }): DeliveryEnvelope {
  const { trigger, appId } = JSON.parse(delivery.body) as { trigger: string; appId: string };
  return deliveryEnvelope({ ...delivery, trigger, appId });
}

/** A store that outlives the processors given it, as a DynamoDB table would. */
function durableIdStore(): DeliveryIdStore & { ids: Set<string> } {
  const ids = new Set<string>();
  return { ids, has: async (id) => ids.has(id), add: async (id) => void ids.add(id) };
}
function durableErasures(): ErasureStateStore {
  const apps = new Map<string, AppErasures>();
  return { get: async (app) => structuredClone(apps.get(app)), set: async (app, e) => void apps.set(app, e) };
}

let n = 0;
const recordOf = (message: object) => ({ messageId: `m${++n}`, body: JSON.stringify(message) });
const batchOf = (messages: readonly object[]) => ({ Records: messages.map(recordOf) });

/** An app's history, a user of it with memberships and presence, and its lines as `forget` redacts them. */
function erasedHistory() {
  const deliveries = simulatedHistory(APP, 11, 120).deliveries;
  // A group's owner: named on the group, with memberships and presence of their own.
  const owned = deliveries.flatMap((d) => {
    const body = JSON.parse(d.body) as { trigger: string; data?: { group?: { owner?: string } } };
    return body.trigger === "group_created" && body.data?.group?.owner ? [body.data.group.owner] : [];
  });
  const uid = owned[0] ?? "";
  const redaction: Redaction = { uid, names: [], pseudonym: PSEUDONYM, erasureId: "erasure-1" };
  const redacted = deliveries.map((d) => {
    const { trigger } = JSON.parse(d.body) as { trigger: string };
    const line = redactArchiveLine(JSON.stringify({ ...d, appId: APP, trigger }), APP, redaction);
    if (line === undefined) return d;
    const { body, erasure } = JSON.parse(line) as { body: string; erasure: string };
    return { ...d, body, erasure };
  });
  return { deliveries, redacted, uid };
}

/** Every table's items of a copy as facts, by id. */
function copyFacts(copy: ReturnType<typeof streamCopy>) {
  return Object.fromEntries(PROJECTION_TABLE_NAMES.map((t) => [t, Object.fromEntries(copy.facts(t))]));
}

const userNotice = (id: string, finishedAt: number): ErasureNotice => ({
  schemaVersion: STREAM_SCHEMA_VERSION,
  kind: "erasure",
  id,
  appId: APP,
  scope: "user",
  pseudonym: PSEUDONYM,
  finishedAt,
});

describe("the package's consumer after an erasure (README: streamBatchProcessor + streamCopy + onErasure: copy.erase)", () => {
  it("rebuilds the copy from the replay after forget, with durable stores, whatever the batches, redeliveries and cold starts (many runs)", async () => {
    const { deliveries, redacted } = erasedHistory();
    const replay = redacted.map(envelopeOf);
    // The reference: what the replay alone folds to (the copy was dropped by the notice).
    const reference = streamCopy();
    await reference.apply(replay);
    expect(reference.facts("groups").size).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 5 }),
        fc.shuffledSubarray(replay, { maxLength: 30 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        async (sizes, redelivered, coldStarts) => {
          // Prepare: the README's consumer, its id and erasure stores durable and its copy kept as a
          // consumer persists it; a cold start is a new processor.
          const handled = durableIdStore();
          const erasures = durableErasures();
          const copy = streamCopy();
          const reacted: string[] = [];
          const container = () =>
            streamBatchProcessor({
              onDelivery: async (delivery) => {
                await copy.apply([delivery]);
                reacted.push(delivery.id);
              },
              onErasure: async (notice) => copy.erase(notice),
              handled,
              erasures,
            });
          let current = container();
          await current(batchOf(deliveries.map(envelopeOf)));

          // Act: forget's notice, then `replay --to-subscriber` (the same ids, the lines naming the
          // user redacted) in batches, with redeliveries, a cold start before some batches.
          await current(batchOf([userNotice("erasure-1", Date.now())]));
          reacted.length = 0;
          const received = [...replay, ...redelivered];
          for (let i = 0, b = 0; i < received.length; b++) {
            const size = sizes[b % sizes.length] ?? 1;
            if (coldStarts[b % coldStarts.length]) current = container();
            await current(batchOf(received.slice(i, i + size)));
            i += size;
          }

          // Assess: every replayed delivery handled once, the copy what the replay folds to.
          expect(reacted.sort()).toEqual(replay.map((e) => e.id).sort());
          expect(copyFacts(copy)).toEqual(copyFacts(reference));
        },
      ),
      { numRuns: 15, seed: 57 },
    );
  });

  it("folds a redacted delivery as the projector projects one redacted in flight: no own item of the pseudonym", async () => {
    // Prepare
    const { redacted } = erasedHistory();
    expect(redacted.some((d) => "erasure" in d)).toBe(true);
    const stores = memoryStores();
    const inFlight = redacted.map((d) => ("erasure" in d ? { ...d, erasedAs: [PSEUDONYM] } : d));

    // Act: the tables (the projector's own rule) and the copy (the package's), from the same deliveries.
    await projectInBatches(inFlight, [7], memoryDeps(stores));
    const copy = streamCopy();
    await copy.apply(redacted.map(envelopeOf));

    // Assess: the same items; the pseudonym named (on a group, a session…) but owning nothing.
    const tables = Object.fromEntries(
      PROJECTION_TABLE_NAMES.map((t) => [
        t,
        Object.fromEntries(
          [...stores[t].items].map(([id, item]) => [id, factFields(t, item as object)] as const),
        ),
      ]),
    );
    expect(copyFacts(copy)).toEqual(tables);
    expect(JSON.stringify(copyFacts(copy))).toContain(PSEUDONYM);
    expect([...copy.items.presence.keys()].filter((id) => id.includes(PSEUDONYM))).toEqual([]);
    expect([...copy.items.memberships.keys()].filter((id) => id.endsWith(`|${PSEUDONYM}`))).toEqual([]);
  });
});

describe("the package's erasure state across cold starts (#61 item 13)", () => {
  it("streamBatchProcessor with a durable erasures store drops, after a cold start, a delivery an app's erasure ended", async () => {
    // Prepare
    const { deliveries } = erasedHistory();
    const [before, after] = [deliveries[0], deliveries.at(-1)].map((d) => envelopeOf(d as Delivery));
    const erasures = durableErasures();
    const reacted: string[] = [];
    const container = () =>
      streamBatchProcessor({ onDelivery: async (d) => void reacted.push(d.id), erasures });
    const appNotice: ErasureNotice = {
      ...userNotice("erasure-app", (before?.receivedAt ?? 0) + 1),
      scope: "app",
    };

    // Act: the notice in one container, the deliveries in a new one.
    await container()(batchOf([appNotice]));
    const out = await container()(batchOf([before as object, after as object]));

    // Assess
    expect(out.batchItemFailures).toEqual([]);
    expect(reacted).toEqual([after?.id]);
  });

  it("streamCopy starts from what a consumer persisted of it: its items and its erasures", async () => {
    // Prepare
    const { deliveries } = erasedHistory();
    const first = streamCopy();
    const late = envelopeOf(deliveries[0] as Delivery);
    first.erase({ ...userNotice("erasure-app", late.receivedAt + 1), scope: "app" });
    await first.apply([envelopeOf(deliveries.at(-1) as Delivery)]);
    const persisted = structuredClone({ items: first.items, erasures: first.erasures });

    // Act
    const again = streamCopy(undefined, persisted);
    await again.apply([late]);

    // Assess
    expect(again.drops(late)).toBe(true);
    expect(copyFacts(again)).toEqual(copyFacts(first));
  });
});

describe("the copy's items as DynamoDB holds them (#61 item 12)", () => {
  it("leaves absent fields absent and names its items by the tables' key attributes", async () => {
    // Prepare
    const copy = streamCopy();

    // Act
    await copy.apply(simulatedHistory(APP, 3, 150).deliveries.map(envelopeOf));

    // Assess: no field set to undefined at any depth; each id from the item's own key attributes.
    const undefinedPaths = (value: unknown, path: string): string[] =>
      value === undefined
        ? [path]
        : value && typeof value === "object"
          ? Object.entries(value).flatMap(([k, v]) => undefinedPaths(v, `${path}.${k}`))
          : [];
    for (const table of PROJECTION_TABLE_NAMES) {
      expect(copy.items[table].size).toBeGreaterThan(0);
      for (const [id, item] of copy.items[table]) {
        expect(undefinedPaths(item, id)).toEqual([]);
        expect(tableItemId(table, item as unknown as Record<string, unknown>)).toBe(id);
      }
      expect(PROJECTION_TABLES[table].partitionKey.name).toBe(TABLE_KEYS[table].partitionKey);
      expect((PROJECTION_TABLES[table] as { sortKey?: { name: string } }).sortKey?.name).toBe(
        (TABLE_KEYS[table] as { sortKey?: string }).sortKey,
      );
    }
  });
});

describe("forward compatibility: a message this package does not know is skipped and reported, never failed", () => {
  const base = envelopeOf(simulatedHistory(APP, 5, 5).deliveries[0] as Delivery);
  const future = { ...base, kind: "forecast", id: "f1" };
  const newer = { ...base, schemaVersion: STREAM_SCHEMA_VERSION + 1, id: "v2" };
  const reconcile: ReconcileFact = { ...base, kind: "reconcile", id: "r1" };

  it("parseStreamMessage throws UnknownStreamMessageError for a kind or schemaVersion it does not know", () => {
    expect(() => parseStreamMessage(JSON.stringify(future))).toThrow(UnknownStreamMessageError);
    expect(() => parseStreamMessage(JSON.stringify(newer))).toThrow(UnknownStreamMessageError);
    expect(parseStreamMessage(JSON.stringify(reconcile)).kind).toBe("reconcile");
  });

  it("streamBatchProcessor skips and reports them, folds reconcile facts through onReconcile, and fails only what is no message", async () => {
    // Prepare
    const skipped: SkippedStreamMessage[] = [];
    const copy = streamCopy();
    const reacted: string[] = [];
    const withReconcile = streamBatchProcessor({
      onDelivery: async (d) => void reacted.push(d.id),
      onReconcile: async (f) => {
        await copy.apply([f]);
        reacted.push(f.id);
      },
      onSkipped: (m) => void skipped.push(m),
    });
    const without = streamBatchProcessor({
      onDelivery: async () => {},
      onSkipped: (m) => void skipped.push(m),
    });
    const junk = { messageId: "junk", body: "{not json" };

    // Act
    const out = await withReconcile({ Records: [...batchOf([future, newer, reconcile]).Records, junk] });
    const out2 = await without(batchOf([reconcile]));

    // Assess
    expect(out.batchItemFailures).toEqual([{ itemIdentifier: "junk" }]);
    expect(out2.batchItemFailures).toEqual([]);
    expect(skipped.map((s) => [s.kind, s.schemaVersion, s.id])).toEqual([
      ["forecast", STREAM_SCHEMA_VERSION, "f1"],
      ["delivery", STREAM_SCHEMA_VERSION + 1, "v2"],
      ["reconcile", STREAM_SCHEMA_VERSION, "r1"],
    ]);
    expect(reacted).toEqual(["r1"]);
    const reference = streamCopy();
    await reference.apply([base]);
    expect(copyFacts(copy)).toEqual(copyFacts(reference));
  });
});
