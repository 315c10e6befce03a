import type { DeliveryEnvelope } from "@webhook-backend/stream";
import { factFields, streamCopy } from "@webhook-backend/stream";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import { applyRecordingOutcome, type SessionState } from "@webhook-backend/stream/projections/sessions";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deliveryEnvelope } from "../../shared/stream/envelope";
import { type Delivery, FIXED_HISTORIES, fixedExample, historyArbitrary } from "../support/histories";
import { memoryDeps, memoryStores, projectInBatches } from "../support/projection";

const FOLLOWED = ["app-a", "app-b"];
const OTHER = "app-c";

/** The envelope the projector publishes for a delivery. */
function envelopeOf(delivery: Delivery): DeliveryEnvelope {
  const { trigger, appId } = JSON.parse(delivery.body) as { trigger: string; appId: string };
  return deliveryEnvelope({ ...delivery, trigger, appId });
}

/** Cuts a list into batches of the given sizes (cycled). */
function batches<T>(items: readonly T[], sizes: readonly number[]): T[][] {
  const out: T[][] = [];
  for (let i = 0, b = 0; i < items.length; b++) {
    const size = Math.max(1, sizes[b % sizes.length] ?? 1);
    out.push(items.slice(i, i + size));
    i += size;
  }
  return out;
}

/** The tables' items of the followed apps, as the contract compares them. */
function tableFacts(stores: ReturnType<typeof memoryStores>) {
  return Object.fromEntries(
    PROJECTION_TABLE_NAMES.map((table) => [
      table,
      Object.fromEntries(
        [...stores[table].items]
          .filter(([, item]) => FOLLOWED.includes((item as { appId: string }).appId))
          .map(([id, item]) => [id, factFields(table, item as object)])
          .sort(([a], [b]) => String(a).localeCompare(String(b))),
      ),
    ]),
  );
}

function copyFacts(copy: ReturnType<typeof streamCopy>) {
  return Object.fromEntries(
    PROJECTION_TABLE_NAMES.map((table) => [
      table,
      Object.fromEntries([...copy.facts(table)].sort(([a], [b]) => a.localeCompare(b))),
    ]),
  );
}

/** Three apps' histories: what each subscriber of the two followed apps receives, in its order with its duplicates. */
const histories = fc
  .tuple(
    historyArbitrary(fc.constant("app-a"), 24),
    historyArbitrary(fc.constant("app-b"), 24),
    historyArbitrary(fc.constant(OTHER), 12),
  )
  .chain(([a, b, c]) => {
    const received = [...a.shuffled, ...b.shuffled];
    return fc
      .shuffledSubarray(received, { minLength: received.length })
      .map((interleaved) => ({ tables: [a, b, c].map((h) => h.history.deliveries), received: interleaved }));
  });

describe("the consumer contract: the projections' fold, exported", () => {
  it("folding every delivery a subscriber received, in any order, with any duplicates and batches, gives the fact-derived fields of the four tables, item for item (many runs)", async () => {
    await fc.assert(
      fc.asyncProperty(
        histories,
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
        async ({ tables, received }, projectorBatches, consumerBatches) => {
          // Prepare: the tables as the projector leaves them (every app, in receipt order, its own
          // batches), with item expiry on (a field no delivery says).
          const stores = memoryStores();
          const receipts = tables.flat().sort((x, y) => x.receivedAt - y.receivedAt);
          await projectInBatches(receipts, projectorBatches, {
            ...memoryDeps(stores),
            itemExpiryDays: { sessions: 30, memberships: 30, presence: 30 },
          });

          // Act: the subscriber's copy, folded batch by batch as its queue hands them over.
          const copy = streamCopy();
          for (const batch of batches(received.map(envelopeOf), consumerBatches)) await copy.apply(batch);

          // Assess
          expect(copyFacts(copy)).toEqual(tableFacts(stores));
        },
      ),
      {
        numRuns: 60,
        examples: FIXED_HISTORIES.slice(0, 4).map((fixed, i) => {
          const [a, b, c] = ["app-a", "app-b", OTHER].map((app) => fixedExample(app, fixed));
          return [
            {
              tables: [a, b, c].map((h) => h?.history.deliveries ?? []),
              received: [...(a?.shuffled ?? []), ...(b?.shuffled ?? [])],
            },
            [1 + i],
            [3, 1],
          ];
        }),
      },
    );
  });

  it("leaves out of the facts what no delivery says: the bookkeeping, the item's expiry and the recorder's outcome", () => {
    // Prepare: a session whose recording the recorder archived.
    const session = {
      pk: "app-a#s1",
      appId: "app-a",
      sessionId: "s1",
      participants: {},
      recordings: {
        "1696937627": {
          recordingDate: "2023-10-10",
          duration: 12,
          startTime: 1696937627,
          sourceUrl: "https://files.example/r.mp4",
          status: "pending",
          attempts: 0,
        },
      },
      firstEventAt: 1,
      sessionTime: 1,
      versions: {},
      seen: { ab: 1 },
      expiresAt: 99,
      rev: 3,
    } as unknown as SessionState;
    const archived = applyRecordingOutcome(session, "1696937627", {
      status: "archived",
      bucket: "b",
      key: "recordings/r.mp4",
      size: 10,
      sha256: "h",
      contentType: "video/mp4",
      archivedAt: 5,
      attempt: 1,
    } as never);

    // Act
    const facts = factFields("sessions", archived);

    // Assess
    expect(facts).toEqual(factFields("sessions", session));
    expect(facts).not.toHaveProperty("rev");
    expect(facts).not.toHaveProperty("seen");
    expect(facts).not.toHaveProperty("expiresAt");
    expect(facts.recordings).toEqual({
      "1696937627": {
        recordingDate: "2023-10-10",
        duration: 12,
        startTime: 1696937627,
        sourceUrl: "https://files.example/r.mp4",
      },
    });
  });

  it("forgets an app's items on its erasure notice, and no other app's; after a whole app's erasure, drops a delivery of it received before the erasure ended", async () => {
    // Prepare
    const [a, b] = ["app-a", "app-b"].map((app) => fixedExample(app, FIXED_HISTORIES[0] ?? [0, 30]));
    const deliveriesOfA = (a?.history.deliveries ?? []).map(envelopeOf);
    const [late, ...rest] = deliveriesOfA;
    const copy = streamCopy();
    await copy.apply([...rest, ...(b?.history.deliveries ?? []).map(envelopeOf)]);
    const appsOf = () =>
      new Set(PROJECTION_TABLE_NAMES.flatMap((t) => [...copy.facts(t).values()].map((f) => f.appId)));

    // Act: the app's erasure, then one of its deliveries published before it, arriving after.
    copy.erase({
      appId: "app-a",
      scope: "app",
      finishedAt: Math.max(...deliveriesOfA.map((d) => d.receivedAt)),
    });
    if (late) await copy.apply([late]);

    // Assess
    expect(appsOf()).toEqual(new Set(["app-b"]));
    copy.erase({ appId: "app-b", scope: "user", finishedAt: 0 });
    expect(appsOf()).toEqual(new Set());
  });
});
