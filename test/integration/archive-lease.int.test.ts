import { beforeAll, describe, expect, it } from "vitest";
import {
  ARCHIVE_LEASE_MS,
  ArchiveLeaseLostError,
  ArchiveLockedError,
  acquireArchiveLease,
  archiveLease,
  COMMAND_LEASE_WAIT,
  type LeaseTable,
  releaseArchiveLease,
  renewArchiveLease,
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
    expect(third).toEqual(new ArchiveLockedError(holder, undefined, now() + ARCHIVE_LEASE_MS));
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

  it("two runs of one erasure: the second waits while the first holds it (one run at a time), saying who and until when, and runs once the first ends", async () => {
    // Prepare: the first run holds the lease; the second (same name: an erasure's re-run) is a
    // command's, whose sleeps move the clock on; at its third sleep the first ends.
    let clock = Date.UTC(2026, 0, 6);
    const now = () => clock;
    const told: Array<[string, number | undefined]> = [];
    let sleeps = 0;
    let endFirst!: () => void;
    const firstEnds = new Promise<void>((resolve) => {
      endFirst = resolve;
    });
    const waiting = archiveLease(table, now, {
      ...COMMAND_LEASE_WAIT,
      onHeld: (holder, until) => told.push([holder, until]),
      sleep: async (ms) => {
        clock += ms;
        if (++sleeps === 3) endFirst();
        await new Promise((resolve) => setImmediate(resolve));
      },
    });
    const order: string[] = [];

    // Act
    const first = withArchiveLease(archiveLease(table, now), "erasure e3", now, async () => {
      order.push("first starts");
      await firstEnds;
      order.push("first ends");
    });
    const second = withArchiveLease(waiting, "erasure e3", now, async () => {
      order.push("second runs");
    });
    await Promise.all([first, second]);

    // Assess: never both at once; the second was told the first's own run and its lease's end.
    expect(order).toEqual(["first starts", "first ends", "second runs"]);
    expect(told).toEqual([
      [expect.stringMatching(/^erasure e3 [0-9a-f]{8}$/), Date.UTC(2026, 0, 6) + ARCHIVE_LEASE_MS],
    ]);
  });
});

describe("renewing is not taking (#50, defect 4)", () => {
  it("a run whose lease lapsed and was taken and released by another: its renewal throws (it never takes the lease back) and its next change is not made", async () => {
    // Prepare
    let clock = Date.UTC(2026, 0, 10);
    const now = () => clock;
    const lease = archiveLease(table, now);
    const changes: string[] = [];

    // Act: the first run's step outlasts the lease; an import's fold takes it, works, releases it;
    // then the first run renews before its next change.
    const first = await withArchiveLease(lease, "erasure e9", now, async (renew) => {
      clock += ARCHIVE_LEASE_MS + 1;
      await withArchiveLease(lease, "import fold (users)", now, async () => {
        changes.push("fold");
      });
      await renew();
      changes.push("erasure's next change");
    }).catch((error: unknown) => error);

    // Assess
    expect(first).toBeInstanceOf(Error);
    expect(first).toBeInstanceOf(ArchiveLeaseLostError);
    expect((first as ArchiveLeaseLostError).now).toBeUndefined();
    expect(changes).toEqual(["fold"]);
    // The lease is free (the first run released nothing of another's, and held nothing).
    await acquireArchiveLease(table, "erasure e10", now());
    await freeLease("erasure e10");
  });

  it("a lease that lapsed and is held by another now: the renewal names who holds it, and leaves it to them", async () => {
    // Prepare
    let clock = Date.UTC(2026, 0, 11);
    const now = () => clock;
    const lease = archiveLease(table, now);
    const other = "compaction 2026-01-10 0000abcd";

    // Act
    const first = await withArchiveLease(lease, "erasure e11", now, async (renew) => {
      clock += ARCHIVE_LEASE_MS + 1;
      await acquireArchiveLease(table, other, now());
      await renew();
    }).catch((error: unknown) => error);

    // Assess: refused, naming the holder; the other's lease left as it was.
    expect(first).toBeInstanceOf(ArchiveLeaseLostError);
    expect((first as ArchiveLeaseLostError).now).toBe(other);
    expect((first as Error).message).toMatch(
      /^the archive lease of erasure e11 [0-9a-f]{8} lapsed \(not renewed for 15 minutes\) and is held by compaction 2026-01-10 0000abcd: stopped before its next change; run it again$/,
    );
    const refused = await acquireArchiveLease(table, "erasure e12", now()).catch((error: unknown) => error);
    expect((refused as ArchiveLockedError).holder).toBe(other);
    await freeLease(other);
  });

  it("a lease that lapsed while no one took it is still its holder's: the renewal keeps it", async () => {
    // Prepare
    let clock = Date.UTC(2026, 0, 12);
    const now = () => clock;
    const lease = archiveLease(table, now);

    // Act
    const result = await withArchiveLease(lease, "erasure e13", now, async (renew) => {
      clock += ARCHIVE_LEASE_MS + 1;
      await renew();
      return acquireArchiveLease(table, "pass 2026-01-12", now()).catch((error: unknown) => error);
    });

    // Assess: renewed (another is refused after the renewal, until 15 minutes from it).
    expect(result).toBeInstanceOf(ArchiveLockedError);
    expect((result as ArchiveLockedError).until).toBe(clock + ARCHIVE_LEASE_MS);
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

  it("held by a holder that renews it: the command gives up after 5 minutes (the lease it found would have lapsed sooner), naming it and until when, and runs nothing", async () => {
    // Prepare: an erasure took the lease 12 minutes ago (it runs 3 more) and renews it as it
    // works (every minute of the command's wait).
    let clock = Date.UTC(2026, 0, 8);
    const now = () => clock;
    await acquireArchiveLease(table, "erasure e6", now() - 12 * 60_000);
    let sleeps = 0;
    let ran = false;
    const lease = archiveLease(table, now, {
      ...COMMAND_LEASE_WAIT,
      sleep: async (ms) => {
        clock += ms;
        if (++sleeps % 30 === 0) await renewArchiveLease(table, "erasure e6", now());
      },
    });

    // Act
    const refused = await withArchiveLease(lease, "compact 2026-01-01..2026-01-01", now, async () => {
      ran = true;
    }).catch((error: unknown) => error);

    // Assess: five minutes of tries every two seconds, then the error a command shows.
    expect(ran).toBe(false);
    expect(sleeps).toBe(COMMAND_LEASE_WAIT.forMs / COMMAND_LEASE_WAIT.everyMs);
    const until = Date.UTC(2026, 0, 8) + COMMAND_LEASE_WAIT.forMs + ARCHIVE_LEASE_MS;
    expect(refused).toEqual(new ArchiveLockedError("erasure e6", COMMAND_LEASE_WAIT.forMs, until));
    expect((refused as Error).message).toBe(
      "the archive is still being rewritten by erasure e6 after 300 s of waiting, whose lease runs until 2026-01-08T00:20:00Z unless renewed: try again when it ends",
    );
    await freeLease("erasure e6");
  });

  it("held by a holder that was killed: the command says until when its lease runs, waits it out (15 minutes, not 5) and runs", async () => {
    // Prepare: a run killed just after taking the lease (never renewed, never released).
    let clock = Date.UTC(2026, 0, 13);
    const now = () => clock;
    await acquireArchiveLease(table, "erasure e14 0badc0de", now());
    const told: Array<[string, number | undefined]> = [];
    let sleeps = 0;
    const lease = archiveLease(table, now, {
      ...COMMAND_LEASE_WAIT,
      onHeld: (holder, until) => told.push([holder, until]),
      sleep: async (ms) => {
        clock += ms;
        sleeps++;
      },
    });

    // Act
    const result = await withArchiveLease(lease, "erasure e14", now, async () => "ran");

    // Assess: told once, with the lease's end; it ran at the first try after that end.
    expect(result).toBe("ran");
    expect(told).toEqual([["erasure e14 0badc0de", Date.UTC(2026, 0, 13) + ARCHIVE_LEASE_MS]]);
    expect(sleeps).toBe(ARCHIVE_LEASE_MS / COMMAND_LEASE_WAIT.everyMs + 1);
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
    expect(refused).toEqual(new ArchiveLockedError("erasure e7", undefined, now() + ARCHIVE_LEASE_MS));
    await freeLease("erasure e7");
  });
});
