import { GetObjectCommand } from "@aws-sdk/client-s3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ArchiveLockedError, archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import {
  dayActivities,
  type RollupDependencies,
  type ScheduledRollupReport,
  scheduledRollup,
} from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { decodeUsers, s3UserSets, userSetKey } from "../../shared/analytics/user-sets";
import { objectText } from "../../shared/contracts/bucket-layout";
import { type ForgetDependencies, forget } from "../../shared/erasure/forget";
import { UNVERSIONED } from "../../shared/erasure/object-versions";
import { mentionsUid } from "../../shared/erasure/redact";
import { projectBatch } from "../../shared/projector/core";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable } from "../../tools/local/provision";
import { generateHistory } from "../../tools/simulate/generator";
import { createBucket, uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { queuedAt } from "../support/queued";

/**
 * Item 3 of #40: a final pass (the one that writes the day sets, `users/…`) and an erasure of the
 * same day, on fauxqs and DynamoDB Local with DuckDB. Whichever starts first, the other is started
 * at one of its steps (the pass's `checkpoint`: after its read, after its figures, after its sets;
 * the erasure's: before each of its changes), or after it ends; what the lease refused (an erasure:
 * `ArchiveLockedError`) or deferred (a pass: `passesDeferred`) is run again once the first ends.
 * Then no day set names the erased user and the day's sets are exactly those of the redacted
 * archive: the person counts once, as the pseudonym.
 */
const env = projectorOnEmulators("final-pass-erasure");
const doc = documentClient(env.dynamo);
const DAY = "2026-04-01";
const TODAY = "2026-04-02";
/** A tick 3 h after the day's end: with a 2 h grace the day is yesterday and its pass final. */
const TICK = Date.UTC(2026, 3, 2, 3);

interface World {
  appId: string;
  bucket: string;
  activityTable: string;
  uid: string;
  schedule: RollupDependencies;
  forgetDeps: (checkpoint?: ForgetDependencies["checkpoint"]) => ForgetDependencies;
}

/** A day of two apps archived and projected, its figures not yet final (a tick during the day). */
async function setUp(seed: number): Promise<World> {
  const appId = uniqueName("fp");
  const other = uniqueName("fq");
  const history = generateHistory({
    events: 160,
    seed,
    apps: [appId, other],
    startAt: Date.UTC(2026, 3, 1, 9) / 1000,
  });
  // A bucket of its own: each run's day, sets and ledger start empty.
  const bucket = await createBucket(env.s3, uniqueName("fp-data"));
  const tables = await env.tableSet();
  const activityTable = uniqueName("activity");
  await createActivityTable(env.dynamo, activityTable);
  const projector = {
    ...env.depsFor(projectionStores(env.dynamo, tables)),
    dataStore: s3BlobStore(env.s3, bucket),
  };
  const deliveries = history.events.map((e, i) => queuedAt(e, e.at + 200 + i));
  for (let i = 0; i < deliveries.length; i += 80) {
    const batch = deliveries.slice(i, i + 80);
    await archiveBatch(batch, projector.dataStore);
    await projectBatch(batch, projector);
  }
  // A user of the app in the day's set (active that day).
  const sets = await dayActivities(duckDbEngine({ s3: env.s3, bucket }), DAY, { app: appId, users: true });
  const uid = sets.daySets?.get(appId)?.users[0]?.uid ?? "";
  expect(uid).not.toBe("");
  const state = { doc, tableName: activityTable };
  const rollup: RollupDependencies = {
    engine: duckDbEngine({ s3: env.s3, bucket }),
    store: dynamoActivityStore(doc, activityTable),
    now: () => TICK,
    graceMs: 7_200_000,
  };
  return {
    appId,
    uid,
    bucket,
    activityTable,
    schedule: {
      ...rollup,
      ledger: blobRollupLedger(s3BlobStore(env.s3, bucket)),
      archiveLock: archiveLease(state, () => TICK),
      userSets: s3UserSets(env.s3, bucket),
    },
    forgetDeps: (checkpoint) => ({
      s3: env.s3,
      bucket,
      search: duckDbEngine({ s3: env.s3, bucket, objectPaths: true }),
      versions: UNVERSIONED,
      doc,
      tables,
      state,
      rollup,
      now: () => TICK,
      checkpoint,
    }),
  };
}

/** The lines of every day-set object (`users/…`) of the bucket, by key. */
async function daySetLines(bucket: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const { key } of await listObjects(env.s3, bucket, "users/")) {
    const got = await env.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const text = objectText((await got.Body?.transformToByteArray()) ?? new Uint8Array());
    out.set(
      key,
      text.split("\n").filter((l) => l.trim()),
    );
  }
  return out;
}

type First = "pass" | "erasure";

describe("a final pass and an erasure of the same day exclude each other (the archive lease)", () => {
  it("leaves no day set naming the erased user, and the day's sets those of the redacted archive, for every interleaving (fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<First>("pass", "erasure"),
        // The step of the first at which the second starts (past its last step: after it ends).
        fc.nat(40),
        fc.integer({ min: 1, max: 1000 }),
        async (first, at, seed) => {
          // Prepare
          const world = await setUp(seed);
          const request = { appId: world.appId, uid: world.uid, requestedBy: "test" };
          // The pass has five steps (yesterday's read, figures, sets; today's read, figures).
          const step = first === "pass" ? at % 6 : at;
          let steps = 0;
          let inner: Promise<unknown> | undefined;
          const startSecond = (run: () => Promise<unknown>) => async () => {
            if (steps++ !== step || inner) return;
            // Awaited here: the second runs to its end (or its refusal) inside the first's step.
            inner = run().catch((error: unknown) => error);
            await inner;
          };
          const pass = (checkpoint?: RollupDependencies["checkpoint"]) =>
            scheduledRollup({ ...world.schedule, ...(checkpoint ? { checkpoint } : {}) });
          const erase = (checkpoint?: ForgetDependencies["checkpoint"]) =>
            forget(world.forgetDeps(checkpoint), request);

          // Act: the first, the second started at its step `at` (or after it), then what waited.
          let firstPass: ScheduledRollupReport | undefined;
          if (first === "pass") firstPass = await pass(startSecond(() => erase()));
          else await erase(startSecond(() => pass()));
          const second = inner ? await inner : await (first === "pass" ? erase() : pass());
          // Started inside the other's lease (every step of the passes, yesterday's final one and
          // today's, and of the erasure), the second was refused or deferred, and said by whom
          // (the pass under its own run's name).
          if (inner && first === "pass" && step < 5) {
            expect(second).toBeInstanceOf(ArchiveLockedError);
            expect((second as ArchiveLockedError).holder).toMatch(
              step < 3
                ? new RegExp(`^final pass ${DAY} [0-9a-f]{8}$`)
                : new RegExp(`^pass ${TODAY} [0-9a-f]{8}$`),
            );
          }
          if (inner && first === "erasure")
            expect((second as ScheduledRollupReport).passesDeferred).toEqual([DAY, TODAY]);
          if (second instanceof ArchiveLockedError) await erase();
          else if (second instanceof Error) throw second;
          const deferred = [
            ...(firstPass?.passesDeferred ?? []),
            ...((second as Partial<ScheduledRollupReport>)?.passesDeferred ?? []),
          ];
          if (deferred.length) expect((await pass()).passesDeferred).toEqual([]);

          // Assess: the user in no set; the day's sets those of the archive as it now is.
          const lines = await daySetLines(world.bucket);
          expect(lines.get(userSetKey(DAY))).toBeDefined();
          for (const [key, list] of lines)
            for (const line of list) expect(mentionsUid(line, world.uid), `${key}: ${line}`).toBe(false);
          const fresh = await dayActivities(duckDbEngine({ s3: env.s3, bucket: world.bucket }), DAY, {
            users: true,
          });
          const stored = decodeUsers(await s3BlobStore(env.s3, world.bucket).getBytes(userSetKey(DAY))).get(
            world.appId,
          );
          expect(stored).toEqual(fresh.daySets?.get(world.appId)?.users);
        },
      ),
      {
        // fast-check counts the examples among numRuns: 9 examples, then 9 random interleavings.
        numRuns: 18,
        // The races named in #40: an erasure at each step of the final pass (after its read: the
        // issue's race) and of today's pass, and a pass at the erasure's first steps (before and
        // after its search).
        examples: [
          ["pass", 0, 1],
          ["pass", 1, 2],
          ["pass", 2, 3],
          ["pass", 3, 7],
          ["pass", 4, 8],
          ["pass", 5, 9],
          ["erasure", 0, 4],
          ["erasure", 1, 5],
          ["erasure", 3, 6],
        ],
      },
    );
  }, 600_000);
});

/**
 * The review of #40: a pass that writes no day set (today's, not final) and a whole-app erasure.
 * The erasure recomputes nothing: it deletes the app's figures and its ledger entries, so a pass
 * that read the archive before the erasure's rewrite and wrote after it put them back (a day's
 * item has no `computedAt` left to refuse it). Every pass that writes figures now holds the
 * archive lease: the erasure, tried at the pass's read, is refused, and runs after the pass.
 */
describe("a pass that writes no set and a whole-app erasure", () => {
  it("leaves none of the erased app's figures nor ledger entries when the erasure runs between the pass's read and its writes", async () => {
    // Prepare: the day of two apps; a tick during it (not final); the erasure of one app at the
    // pass's read of the day (the second read of the tick: yesterday's comes first).
    const world = await setUp(7);
    const during = Date.UTC(2026, 3, 1, 20);
    const ledger = blobRollupLedger(s3BlobStore(env.s3, world.bucket));
    let reads = 0;
    let inner: unknown;
    // The erasure's clock a minute after the pass's (the lease's expiry is read on it).
    const erase = () =>
      forget(
        { ...world.forgetDeps(), now: () => during + 60_000 },
        { appId: world.appId, requestedBy: "test" },
      );

    // Act: the erasure inside the pass (or, refused there by a lease the pass holds, after it).
    await scheduledRollup({
      ...world.schedule,
      now: () => during,
      archiveLock: archiveLease({ doc, tableName: world.activityTable }, () => during),
      checkpoint: async (step) => {
        if (step !== "read" || reads++ !== 1) return;
        inner = await erase().catch((error: unknown) => error);
      },
    });
    if (inner instanceof ArchiveLockedError) await erase();
    else if (inner instanceof Error || inner === undefined) throw inner ?? new Error("the erasure never ran");

    // Assess: the erasure was refused by today's pass (it holds the lease), and ran after it; the
    // erased app has no figures and no ledger entry.
    expect((inner as ArchiveLockedError).holder).toMatch(new RegExp(`^pass ${DAY} [0-9a-f]{8}$`));
    expect(await world.schedule.store.day(world.appId, DAY)).toBeUndefined();
    expect(Object.keys((await ledger.pass(DAY))?.apps ?? {})).not.toContain(world.appId);
  }, 120_000);
});
