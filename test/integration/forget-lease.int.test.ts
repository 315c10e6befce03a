import { describe, expect, it } from "vitest";
import {
  ARCHIVE_LEASE_MS,
  ArchiveLeaseLostError,
  ArchiveLockedError,
  archiveLease,
} from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3ImportRecords } from "../../shared/adapters/import-records";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import { erasureRecords } from "../../shared/erasure/erasure-state";
import { type ForgetDependencies, forget } from "../../shared/erasure/forget";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { createActivityTable } from "../../tools/local/provision";
import { uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { erasureDeps, groupJoinedByU1, U1, U2 } from "./forget-support";

/**
 * The erasure's lease against a lapse (#50, defect 4), on DynamoDB Local, fauxqs and DuckDB, with
 * an injected clock: a search that outlasts the lease renews it as it goes, so an import's fold
 * that comes meanwhile waits; and a run whose lease lapsed inside one step (a query longer than
 * the lease) and was taken by another stops before its next change instead of taking it back, and
 * a re-run completes the erasure. The clock moves as the search engine answers (the engine is the
 * real DuckDB, wrapped to say how long each query took).
 */
const env = projectorOnEmulators("forget-lease");
const MINUTE = 60_000;
const START = Date.UTC(2026, 5, 1);

/** A site: an app whose archive names U1 on three days (three search queries a round), and U1 and U2 imported. */
async function site() {
  const tables = await env.tableSet();
  const activityTable = uniqueName("activity");
  await createActivityTable(env.dynamo, activityTable);
  const appId = uniqueName("lease-app");
  const store = s3BlobStore(env.s3, env.bucket);
  for (const day of [2, 3, 4])
    await archiveBatch(groupJoinedByU1(appId, `g-${day}`, Date.UTC(2026, 4, day, 12)), store);
  const records = s3ImportRecords(env.s3, env.bucket);
  let clock = START;
  const lease = archiveLease({ doc: documentClient(env.dynamo), tableName: activityTable }, () => clock);
  // U2 imported and folded into the day's object; then U1's batch, not folded yet (an import under way).
  await records.addBatch(appId, [{ app: appId, uid: U2, importedAt: Date.UTC(2026, 4, 20) / 1000 }]);
  await records.fold(lease, () => clock);
  await records.addBatch(appId, [{ app: appId, uid: U1, importedAt: Date.UTC(2026, 4, 20) / 1000 }]);
  const deps = (search: (engine: SqlEngine) => SqlEngine): ForgetDependencies => {
    const base = erasureDeps({ ...env, bucket: env.bucket, tables, activityTable, now: START });
    return { ...base, search: search(base.search), now: () => clock, searchChunkBytes: 1 };
  };
  return {
    appId,
    activityTable,
    records,
    lease,
    deps,
    clock: {
      get: () => clock,
      add: (ms: number) => {
        clock += ms;
      },
    },
  };
}

/** The engine with each query taking `minutes` on the clock, and `after` told each query's number once it answered. */
function slow(
  engine: SqlEngine,
  add: (ms: number) => void,
  minutes: number,
  after: (n: number) => Promise<void>,
): SqlEngine {
  let n = 0;
  return {
    name: engine.name,
    async query(sql, params, scope) {
      const out = await engine.query(sql, params, scope);
      add(minutes * MINUTE);
      await after(++n);
      return out;
    },
  };
}

describe("the erasure's lease against a lapse", () => {
  it("a search of 18 minutes (three queries of 6) renews the lease as it goes: an import's fold that comes after 15 minutes waits, and the erasure leaves no uid in the import records", async () => {
    // Prepare
    const world = await site();
    let fold: unknown;

    // Act: after the third query (18 minutes into the search), the import ends and folds.
    const report = await forget(
      world.deps((engine) =>
        slow(engine, world.clock.add, 6, async (n) => {
          if (n === 3) fold = await world.records.fold(world.lease, world.clock.get).catch((e: unknown) => e);
        }),
      ),
      { appId: world.appId, uid: U1, requestedBy: "test" },
    );

    // Assess: the fold refused by the erasure's run (its lease renewed, 18 minutes after it took
    // it); the import records hold the pseudonym, not U1.
    expect(world.clock.get() - START).toBeGreaterThan(ARCHIVE_LEASE_MS);
    expect(fold).toBeInstanceOf(ArchiveLockedError);
    expect((fold as ArchiveLockedError).holder).toMatch(
      new RegExp(`^erasure ${report.erasureId} [0-9a-f]{8}$`),
    );
    const users = await world.records.users(world.appId);
    expect([...users.keys()].sort()).toEqual([U2, report.pseudonym].sort());
  }, 120_000);

  it("a lease that lapsed inside one query (16 minutes) and was taken and released by an import's fold: the erasure stops before its next change (it does not take it back), and a re-run completes it", async () => {
    // Prepare
    const world = await site();
    let fold: unknown;

    // Act: the first query outlasts the lease; the import folds U1's batch into the day's object
    // meanwhile (it takes the lapsed lease, and releases it).
    const first = await forget(
      world.deps((engine) =>
        slow(engine, world.clock.add, 16, async (n) => {
          if (n === 1) fold = await world.records.fold(world.lease, world.clock.get);
        }),
      ),
      { appId: world.appId, uid: U1, requestedBy: "test" },
    ).catch((error: unknown) => error);
    const lostAt = world.clock.get();
    const afterFirst = [...(await world.records.users(world.appId)).keys()].sort();
    const again = await forget(
      world.deps((engine) => engine),
      { appId: world.appId, uid: U1, requestedBy: "test" },
    );

    // Assess: the fold ran; the first run said its lease was lost, changed nothing after it (U1
    // still in the import records), and the re-run erased U1 there.
    expect(fold).toBe(1);
    expect(first).toBeInstanceOf(Error);
    expect(first).toBeInstanceOf(ArchiveLeaseLostError);
    expect((first as Error).message).toMatch(
      /^the archive lease of erasure [0-9a-f]{16} [0-9a-f]{8} lapsed \(not renewed for 15 minutes\) and was taken by another rewrite meanwhile: stopped before its next change; run it again$/,
    );
    expect(lostAt - START).toBeGreaterThan(ARCHIVE_LEASE_MS);
    expect(afterFirst).toEqual([U1, U2].sort());
    expect(again.erasureId).toBe((first as ArchiveLeaseLostError).holder.split(" ")[1]);
    const users = await world.records.users(world.appId);
    expect([...users.keys()].sort()).toEqual([U2, again.pseudonym].sort());
  }, 120_000);

  it("two runs of one erasure at once (#50, also found): the second waits while the first runs, saying who holds the archive and until when, then finds the erasure done and nothing left; the first's record stands", async () => {
    // Prepare
    const world = await site();
    const told: Array<[string, number | undefined]> = [];
    let second: Promise<unknown> | undefined;
    const request = { appId: world.appId, uid: U1, requestedBy: "test" };
    const steps: string[] = [];
    // The second run's wait yields to the first (the clock stays: no lease lapses).
    const leaseWait = {
      everyMs: 2_000,
      forMs: 5 * MINUTE,
      onHeld: (holder: string, until?: number) => told.push([holder, until]),
      sleep: () => new Promise<void>((resolve) => setTimeout(resolve, 5)),
    };

    // Act: the second run started when the first saves its plan (the first already holds the
    // lease and has found what to change), not awaited there.
    const first = await forget(
      {
        ...world.deps((engine) => engine),
        leaseWait,
        checkpoint: (step) => {
          steps.push(`first ${step.split(" ")[0]}`);
          if (step === "save plan" && !second)
            second = forget(
              {
                ...world.deps((engine) => engine),
                leaseWait,
                checkpoint: (s) => {
                  steps.push(`second ${s.split(" ")[0]}`);
                },
              },
              request,
            );
        },
      },
      request,
    );
    const report = (await second) as Awaited<ReturnType<typeof forget>>;

    // Assess: the second waited (told the first's run), ran after the first's last step, as a new
    // erasure that found nothing; the first's record and its counts stand.
    expect(told).toEqual([
      [
        expect.stringMatching(new RegExp(`^erasure ${first.erasureId} [0-9a-f]{8}$`)),
        START + ARCHIVE_LEASE_MS,
      ],
    ]);
    const firstSteps = steps.filter((s) => s.startsWith("first"));
    expect(steps.slice(0, firstSteps.length)).toEqual(firstSteps);
    expect(report.erasureId).not.toBe(first.erasureId);
    expect(report.counts.objectsRewritten + report.counts.linesRedacted).toBe(0);
    expect(first.counts.linesRedacted).toBeGreaterThan(0);
    const records = await erasureRecords(
      { doc: documentClient(env.dynamo), tableName: world.activityTable },
      world.appId,
    );
    expect(records.find((r) => r.erasureId === first.erasureId)?.counts).toEqual(first.counts);
  }, 120_000);
});
