import { beforeAll, describe, expect, it } from "vitest";
import {
  ARCHIVE_LEASE_MS,
  ArchiveLockedError,
  acquireArchiveLease,
  archiveLease,
  COMMAND_LEASE_WAIT,
  type LeaseTable,
  releaseArchiveLease,
  withArchiveLease,
} from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import { rollupDays } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { createActivityTable } from "../../tools/local/provision";
import { testClients, uniqueName } from "../support/aws";

/**
 * The archive lease (the review of #40, items D and A's wait) on DynamoDB Local: each run holds it
 * under a name of its own, so two runs of one command never both hold it, and a run that ends
 * never releases another's; a command's lease waits for a holder that ends soon, and gives up
 * with a clear error on one that does not. The waits sleep on an injected clock: no timing.
 */
const { dynamo } = testClients();
const doc = documentClient(dynamo);
let table: LeaseTable;

beforeAll(async () => {
  const tableName = uniqueName("lease");
  await createActivityTable(dynamo, tableName);
  table = { doc, tableName };
});

const NAME = "compaction 2026-01-02";
const RUN = /^compaction 2026-01-02 [0-9a-f]{8}$/;

/** The lease's item freed for the next test (whoever holds it). */
async function freeLease(holder: string): Promise<void> {
  await releaseArchiveLease(table, holder);
}

describe("two runs of the same command", () => {
  it("`rollup` of one range twice at once: the second is refused, naming the first's run, while the first holds it", async () => {
    // Prepare: a closed day, figures from a stub engine (the lease and the store are DynamoDB Local's).
    const now = () => Date.UTC(2026, 0, 5);
    const lease = archiveLease(table, now);
    const engine: SqlEngine = {
      name: "duckdb",
      query: async () => ({
        columns: [],
        rows: [{ app: "a1", grouping_set: 31, messages: 3 }],
        bytesScanned: 1,
      }),
    };
    const deps = {
      engine,
      store: dynamoActivityStore(doc, table.tableName),
      now,
      graceMs: 7_200_000,
      archiveLock: lease,
    };
    let second: unknown;
    let third: unknown;

    // Act: the second run started at the first's read; an erasure tried right after it.
    const first = await rollupDays(["2026-01-02"], {
      ...deps,
      checkpoint: async (step) => {
        if (step !== "read" || second !== undefined) return;
        second = await rollupDays(["2026-01-02"], deps).catch((error: unknown) => error);
        third = await acquireArchiveLease(table, "erasure e1", now()).catch((error: unknown) => error);
      },
    });

    // Assess: the second refused by the first's own run; the lease still the first's after the
    // second's attempt (the erasure refused too); the first wrote its day and released it.
    expect(second).toBeInstanceOf(ArchiveLockedError);
    const holder = (second as ArchiveLockedError).holder;
    expect(holder).toMatch(/^rollup 2026-01-02\.\.2026-01-02 [0-9a-f]{8}$/);
    expect(third).toEqual(new ArchiveLockedError(holder));
    expect(first.rollups.map((r) => `${r.appId} ${r.outcome}`)).toEqual(["a1 written"]);
    await acquireArchiveLease(table, "erasure e1", now());
    await freeLease("erasure e1");
  });

  it("a run whose lease lapsed and was taken by a second run of the same command ends without releasing the second's", async () => {
    // Prepare: one clock for both runs; the first's lease lapses while it works.
    let clock = Date.UTC(2026, 0, 5);
    const now = () => clock;
    const lease = archiveLease(table, now);
    let secondHolds!: () => void;
    const secondHolding = new Promise<void>((resolve) => {
      secondHolds = resolve;
    });
    let firstEnded!: () => void;
    const firstEnd = new Promise<void>((resolve) => {
      firstEnded = resolve;
    });
    let second: Promise<unknown> | undefined;

    // Act: the first run lapses, the second takes the lease, the first ends (and releases), then
    // an erasure tries while the second still works.
    await withArchiveLease(lease, NAME, now, async () => {
      clock += ARCHIVE_LEASE_MS + 1;
      second = withArchiveLease(lease, NAME, now, async () => {
        secondHolds();
        await firstEnd;
        return acquireArchiveLease(table, "erasure e2", now()).catch((error: unknown) => error);
      });
      await secondHolding;
    });
    firstEnded();
    const erasure = await second;

    // Assess: the erasure was refused by the second run, named as its own run.
    expect(erasure).toBeInstanceOf(ArchiveLockedError);
    expect((erasure as ArchiveLockedError).holder).toMatch(RUN);
    await acquireArchiveLease(table, "erasure e2", now());
    await freeLease("erasure e2");
  });

  it("an erasure keeps its name (resumable): its re-run after a crash resumes the lease its first run left", async () => {
    // Prepare: a crashed erasure's lease (taken, never released).
    const now = () => Date.UTC(2026, 0, 6);
    await acquireArchiveLease(table, "erasure e3", now());

    // Act
    const resumed = await withArchiveLease(
      archiveLease(table, now),
      "erasure e3",
      now,
      async () => "resumed",
      {
        resumable: true,
      },
    );

    // Assess: it ran, and released the lease (free for anyone).
    expect(resumed).toBe("resumed");
    await acquireArchiveLease(table, "erasure e4", now());
    await freeLease("erasure e4");
  });
});

describe("a command waits for the lease", () => {
  it("held, then released while it waits: the command says who held it once, and proceeds", async () => {
    // Prepare: an erasure holds the lease; the command's sleeps advance its clock and, at the
    // third, the erasure ends.
    let clock = Date.UTC(2026, 0, 7);
    const now = () => clock;
    await acquireArchiveLease(table, "erasure e5", now());
    const told: string[] = [];
    let sleeps = 0;
    const lease = archiveLease(table, now, {
      ...COMMAND_LEASE_WAIT,
      onHeld: (holder) => told.push(holder),
      sleep: async (ms) => {
        clock += ms;
        if (++sleeps === 3) await releaseArchiveLease(table, "erasure e5");
      },
    });

    // Act
    const result = await withArchiveLease(lease, "rollup 2026-01-01..2026-01-02", now, async () => "ran");

    // Assess
    expect(result).toBe("ran");
    expect(sleeps).toBe(3);
    expect(told).toEqual(["erasure e5"]);
  });

  it("held past the bound: the clear error (who holds it, how long it waited), and nothing run", async () => {
    // Prepare: an erasure holds the lease and never ends.
    let clock = Date.UTC(2026, 0, 8);
    const now = () => clock;
    await acquireArchiveLease(table, "erasure e6", now());
    let sleeps = 0;
    let ran = false;
    const lease = archiveLease(table, now, {
      ...COMMAND_LEASE_WAIT,
      sleep: async (ms) => {
        clock += ms;
        sleeps++;
      },
    });

    // Act
    const refused = await withArchiveLease(lease, "compact 2026-01-01..2026-01-01", now, async () => {
      ran = true;
    }).catch((error: unknown) => error);

    // Assess: five minutes of tries every two seconds, then the error a command shows.
    expect(ran).toBe(false);
    expect(sleeps).toBe(COMMAND_LEASE_WAIT.forMs / COMMAND_LEASE_WAIT.everyMs);
    expect(refused).toEqual(new ArchiveLockedError("erasure e6", COMMAND_LEASE_WAIT.forMs));
    expect((refused as Error).message).toBe(
      "the archive is still being rewritten by erasure e6 after 300 s of waiting: try again when it ends",
    );
    await freeLease("erasure e6");
  });

  it("the schedule's lease (no wait) is refused at once", async () => {
    // Prepare
    const now = () => Date.UTC(2026, 0, 9);
    await acquireArchiveLease(table, "erasure e7", now());

    // Act
    const refused = await withArchiveLease(
      archiveLease(table, now),
      "pass 2026-01-09",
      now,
      async () => {},
    ).catch((error: unknown) => error);

    // Assess
    expect(refused).toEqual(new ArchiveLockedError("erasure e7"));
    await freeLease("erasure e7");
  });
});
