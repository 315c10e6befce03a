import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { beforeAll, describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import {
  type ArchiveCompactor,
  type ArchiveRewriter,
  compactManifestKey,
  parseCompactionManifest,
} from "../../shared/analytics/compaction";
import { duckDbCompactor } from "../../shared/analytics/engines/duckdb-compactor";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { UncompactedDaysError } from "../../shared/platform/errors";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch, archiveLine } from "../../shared/projector/raw-archive";
import { createActivityTable } from "../../tools/local/provision";
import { migrateArchive } from "../../tools/ops/archive-migrate";
import { scanArchive } from "../../tools/ops/archive-scan";
import { findEvents } from "../../tools/ops/inspect";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { fixture } from "../support/fixtures";

const { s3, dynamo } = testClients();
const at = (day: number, h: number, m = 0) => Date.UTC(2026, 0, day, h, m);

function event(appId: string, id: string, receivedAt: number): QueuedEvent {
  const body = fixture("message_sent");
  body.appId = appId;
  Object.assign(body.data.message, { id, sentAt: receivedAt / 1000 - 1 });
  const text = JSON.stringify(body);
  const eventId = createHash("sha256").update(text).digest("hex");
  return { messageId: `m-${id}`, eventId, receivedAt, trigger: "message_sent", appId, body: text };
}

async function keysUnder(bucket: string, prefix: string) {
  return (await listObjects(s3, bucket, prefix)).map((o) => o.key).sort();
}

async function allLines(bucket: string) {
  const lines: string[] = [];
  await scanArchive(s3, bucket, {}, "oldest", (line) => {
    lines.push(JSON.stringify(line));
  });
  return lines.sort();
}

/**
 * A bucket of its own with a compacted day of the batch layout and an object of the same day
 * still in the layout per app (a migration adds it to the day), the day final and compacted in
 * the rollup ledger.
 */
async function compactedDayToMigrate(name: string, dayOfMonth: number) {
  const own = await createBucket(s3, uniqueName(name));
  const day = `2026-01-${String(dayOfMonth).padStart(2, "0")}`;
  await archiveBatch([event("a1", "m1", at(dayOfMonth, 9))], s3BlobStore(s3, own));
  await s3.send(
    new PutObjectCommand({
      Bucket: own,
      Key: `raw/app=a2/date=${day}/${name}.ndjson.gz`,
      Body: gzipSync(`${JSON.stringify(archiveLine(event("a2", "m2", at(dayOfMonth, 10))))}\n`),
    }),
  );
  await duckDbCompactor({ s3, bucket: own }).compactDay(day);
  const ledger = blobRollupLedger(s3BlobStore(s3, own));
  const pass = { day, computedAt: 1, final: true, queries: 1, bytesScanned: 1, apps: {}, compactedAt: 1 };
  await ledger.record(pass);
  return { own, day, ledger, pass };
}

describe("the batch layout of the archive", () => {
  let bucket: string;
  /** The archive lease in an activity table of DynamoDB Local. */
  let rewriter: ArchiveRewriter;
  beforeAll(async () => {
    bucket = await createBucket(s3, uniqueName("layout"));
    const table = uniqueName("activity");
    await createActivityTable(dynamo, table);
    rewriter = {
      lease: archiveLease({ doc: documentClient(dynamo), tableName: table }, Date.now),
      now: Date.now,
    };
  });

  it("rewrites an archive written per app into it, idempotently, and back (archive-migrate)", async () => {
    // Prepare: objects as the previous version wrote them, two apps (one needing URL-encoding).
    const events = [
      event("a1", "m1", at(2, 10)),
      event("a1", "m2", at(2, 11, 30)),
      event("ä/2 ?", "m3", at(2, 11, 31)),
    ];
    const legacy = [
      { key: "raw/app=a1/date=2026-01-02/aaaa.ndjson.gz", lines: [events[0], events[1]] },
      { key: `raw/app=${encodeURIComponent("ä/2 ?")}/date=2026-01-02/bbbb.ndjson.gz`, lines: [events[2]] },
      { key: "edge/app=a1/date=2026-01-01/cccc.ndjson.gz", lines: [events[0]] },
    ];
    for (const o of legacy)
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: o.key,
          Body: gzipSync(`${o.lines.map((e) => JSON.stringify(archiveLine(e as QueuedEvent))).join("\n")}\n`),
        }),
      );

    // Act
    const forward = await migrateArchive(s3, bucket, rewriter);
    const again = await migrateArchive(s3, bucket, rewriter);
    const migrated = await allLines(bucket);
    const edges = await keysUnder(bucket, "edge/");
    const back = await migrateArchive(s3, bucket, rewriter, { back: true });
    const restored = await keysUnder(bucket, "raw/");
    await migrateArchive(s3, bucket, rewriter);

    // Assess: the raw object of a1 spans two hours: two objects; the edge keeps its day.
    expect(forward).toMatchObject({ read: 3, written: 4, deleted: 3, lines: 4 });
    expect(again).toMatchObject({ read: 0, written: 0 });
    expect(edges).toEqual(["edge/date=2026-01-01/cccc.ndjson.gz"]);
    expect(migrated).toEqual(events.map((e) => JSON.stringify(archiveLine(e))).sort());
    expect(back).toMatchObject({ direction: "back", read: 4, deleted: 4 });
    expect(restored.every((k) => k.startsWith("raw/app="))).toBe(true);
    expect(
      restored.some((k) => k.startsWith(`raw/app=${encodeURIComponent("ä/2 ?")}/date=2026-01-02/`)),
    ).toBe(true);
    expect(await allLines(bucket)).toEqual(migrated);
  });

  it("migrates under the archive lease, and compacts again a compacted day it adds objects to (#40 item 6)", async () => {
    // Prepare: a day compacted from its one object of the batch layout; an object of the same
    // day still in the layout per app.
    const own = await createBucket(s3, uniqueName("layout-compacted"));
    const [early, late] = [event("a1", "m1", at(7, 9)), event("a2", "m2", at(7, 10))] as [
      QueuedEvent,
      QueuedEvent,
    ];
    await archiveBatch([early], s3BlobStore(s3, own));
    await s3.send(
      new PutObjectCommand({
        Bucket: own,
        Key: "raw/app=a2/date=2026-01-07/dddd.ndjson.gz",
        Body: gzipSync(`${JSON.stringify(archiveLine(late))}\n`),
      }),
    );
    const compactor = duckDbCompactor({ s3, bucket: own });
    const before = await compactor.compactDay("2026-01-07");
    const withCompactor = { ...rewriter, compactor };

    // Act: refused while an erasure holds the lease; then run.
    await rewriter.lease.acquire("erasure e2");
    await expect(migrateArchive(s3, own, withCompactor)).rejects.toEqual(
      expect.objectContaining({ name: "ArchiveLockedError", holder: "erasure e2" }),
    );
    const untouched = await keysUnder(own, "raw/app=");
    await rewriter.lease.release("erasure e2");
    const report = await migrateArchive(s3, own, withCompactor);

    // Assess: the day's Parquet now holds both lines, and its manifest both objects.
    expect(untouched).toEqual(["raw/app=a2/date=2026-01-07/dddd.ndjson.gz"]);
    expect(report).toMatchObject({ read: 1, written: 1, recompacted: ["2026-01-07"], uncompacted: [] });
    const manifest = parseCompactionManifest(
      await s3BlobStore(s3, own).getText(compactManifestKey("2026-01-07")),
      "manifest",
    );
    expect(before.sources).toHaveLength(1);
    expect(manifest.sources).toHaveLength(2);
    expect(manifest.rows).toBe(2);
    const ids = await duckDbEngine({ s3, bucket: own }).query(
      "SELECT event_id FROM archive_events ORDER BY event_id",
      {},
      { from: "2026-01-07", to: "2026-01-07" },
    );
    expect(ids.rows.map((r) => r.event_id)).toEqual([early.eventId, late.eventId].sort());
  });

  it("back, drops a day's compaction as every rewrite does: the compactor's query still running stopped first, and not compacted again (review of #40, E2)", async () => {
    // Prepare: a day of the batch layout compacted; a compactor whose CTAS may still be running.
    const own = await createBucket(s3, uniqueName("layout-back"));
    await archiveBatch([event("a1", "m1", at(8, 9))], s3BlobStore(s3, own));
    const duck = duckDbCompactor({ s3, bucket: own });
    await duck.compactDay("2026-01-08");
    const stopped: string[] = [];
    const compacted: string[] = [];
    const compactor: ArchiveCompactor = {
      compactDay: async (day) => {
        compacted.push(day);
        return duck.compactDay(day);
      },
      stopDay: async (day) => {
        stopped.push(day);
      },
    };

    // Act
    const report = await migrateArchive(s3, own, { ...rewriter, compactor }, { back: true });

    // Assess: the query stopped before the drop; nothing compacted again; no compaction left.
    expect(stopped).toEqual(["2026-01-08"]);
    expect(compacted).toEqual([]);
    expect(report).toMatchObject({
      direction: "back",
      recompacted: ["2026-01-08"],
      uncompacted: ["2026-01-08"],
    });
    expect(await keysUnder(own, "compact/")).toEqual([]);
  });

  it("a rewrite that fails between dropping a day's compaction and compacting it again names the day, and the ledger no longer calls it compacted (review of #40, E1)", async () => {
    // Prepare: a compacted day to migrate, final and compacted in the ledger; a compactor that
    // fails (a fault the emulators cannot produce: a stub of the compactor port).
    const { own, day, ledger, pass } = await compactedDayToMigrate("layout-fail", 9);
    const failing: ArchiveCompactor = {
      compactDay: async () => {
        throw new Error("Athena query failed: bytes scanned limit");
      },
    };

    // Act
    const error = await migrateArchive(s3, own, { ...rewriter, compactor: failing }).catch((e: unknown) => e);

    // Assess: the error names the day and what failed; the ledger's pass is the same but for
    // compactedAt; readers take the day's NDJSON (no compaction left).
    expect(error).toBeInstanceOf(UncompactedDaysError);
    expect((error as UncompactedDaysError).days).toEqual([day]);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^Athena query failed: bytes scanned limit; the compaction of ${day} was dropped .*webhook compact --from ${day} --to ${day}`,
      ),
    );
    const { compactedAt: _at, ...uncompacted } = pass;
    expect(await ledger.pass(day)).toEqual(uncompacted);
    expect(await keysUnder(own, "compact/")).toEqual([]);
  });

  it("a rewrite that compacts a day again records it in the ledger", async () => {
    // Prepare: as above, with a compactor that works.
    const { own, day, ledger } = await compactedDayToMigrate("layout-ledger", 11);
    const compactor = duckDbCompactor({ s3, bucket: own });
    const now = at(20, 0);

    // Act
    const report = await migrateArchive(s3, own, { ...rewriter, compactor, now: () => now });

    // Assess
    expect(report).toMatchObject({ recompacted: [day], uncompacted: [] });
    expect((await ledger.pass(day))?.compactedAt).toBe(now);
  });

  it("finds an event where it can be, newest first, and says how far it looked", async () => {
    // Prepare: three days of one batch of three apps each hour 10 and 20.
    const own = await createBucket(s3, uniqueName("lookup"));
    const store = s3BlobStore(s3, own);
    const batches = [3, 4, 5].flatMap((day) =>
      [10, 20].map((h) => ["a1", "a2", "a3"].map((app) => event(app, `m-${day}-${h}-${app}`, at(day, h)))),
    );
    for (const batch of batches) await archiveBatch(batch, store);
    const target = batches[1]?.[2] as QueuedEvent;
    const newest = batches[5]?.[0] as QueuedEvent;

    // Act
    const byHour = await findEvents(s3, own, target.eventId, { appId: "a3", receivedAt: target.receivedAt });
    const bare = await findEvents(s3, own, newest.eventId);
    const missing = await findEvents(s3, own, "f".repeat(64), { days: 2 });

    // Assess
    expect(byHour.found.map((f) => f.line.eventId)).toEqual([target.eventId]);
    expect(byHour.searched).toContain(
      "2026-01-03 back to 2026-01-03 (1 day(s), the hour of its receipt, 1 object(s))",
    );
    // The newest day's newest object first: one object read.
    expect(bare.found.map((f) => f.line.eventId)).toEqual([newest.eventId]);
    expect(bare.searched).toContain("1 object(s)");
    expect(missing.found).toEqual([]);
    expect(missing.searched).toContain("from 2026-01-05 back to 2026-01-04 (2 day(s)");
  });
});
