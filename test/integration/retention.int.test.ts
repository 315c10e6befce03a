import { createHash } from "node:crypto";
import { HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { acquireArchiveLease, archiveLease, releaseArchiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3ImportRecords } from "../../shared/adapters/import-records";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { archiveExpirySweep } from "../../shared/analytics/archive-expiry";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { readQuery } from "../../shared/analytics/queries";
import { type RollupDependencies, scheduledRollup } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { s3UserSets, usersOverTime, writeDayUsers } from "../../shared/analytics/user-sets";
import { addDays, isExpired, keyDay, utcDay } from "../../shared/contracts/bucket-layout";
import { encodeImportedUsers, importDayKey } from "../../shared/contracts/import-records";
import { projectBatch } from "../../shared/projector/core";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable } from "../../tools/local/provision";
import { applyRetention, retentionWindows } from "../../tools/local/retention";
import { beforeCommand, createBucket, testClients, uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { fixture } from "../support/fixtures";

/**
 * Retention on the local stack's emulators (#34 item 1): fauxqs has no lifecycle rules and
 * DynamoDB Local no TTL deletion, so the local stack applies the deployment's windows itself.
 */
const env = projectorOnEmulators("retention");
const doc = documentClient(env.dynamo);
const NOW = Date.UTC(2027, 5, 1, 12);

function presence(uid: string, status: "online" | "offline", at: number): QueuedEvent {
  const e = fixture("user_connection_status_changed");
  e.appId = "r-app";
  e.data.user.uid = uid;
  e.data.status = status;
  e.data.timestamp = at;
  const body = JSON.stringify(e);
  const eventId = createHash("sha256").update(body).digest("hex");
  return { messageId: eventId, eventId, receivedAt: at, trigger: e.trigger, appId: "r-app", body };
}

describe("retention windows on the local stack", () => {
  it("dates keys as S3 would expire them: the first midnight after the day plus the window", () => {
    expect(keyDay("raw/date=2026-01-02/hour=07/a.ndjson.gz")).toBe("2026-01-02");
    expect(keyDay("recordings/app/2026/01/02/s/1.mp4")).toBe("2026-01-02");
    expect(keyDay("rollup/ledger.json")).toBeUndefined();
    expect(isExpired("2026-01-02", 10, Date.UTC(2026, 0, 13) - 1)).toBe(false);
    expect(isExpired("2026-01-02", 10, Date.UTC(2026, 0, 13))).toBe(true);
  });

  it("deletes the objects keyed by app and the closed items past their windows, keeps the rest, and the projector dates each closed item", async () => {
    // Prepare: the windows of a deployment that keeps the archive 400 days and offline presence 402.
    const windows = retentionWindows({
      retainArchiveDays: 400,
      retainRecordingsDays: 30,
      expireOfflinePresenceDays: 402,
    });
    const tables = await env.tableSet();
    const keys = {
      old: "raw/date=2026-04-01/hour=00/old.ndjson.gz",
      kept: "raw/date=2026-05-01/hour=00/kept.ndjson.gz",
      oldRecording: "recordings/r-app/2027/04/30/s1/1.mp4",
      newRecording: "recordings/r-app/2027/05/15/s2/1.mp4",
      ledger: "rollup/date=2020-01-01.json",
      oldImport: "imports/users/date=2026-04-01/users.ndjson.gz",
      keptImport: "imports/users/date=2026-05-01/batch-ab.ndjson.gz",
    };
    for (const key of Object.values(keys))
      await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: "x" }));
    const projector = { ...env.depsFor(projectionStores(env.dynamo, tables)), itemExpiryDays: windows.items };
    const longAgo = NOW - 403 * 86_400_000;
    await projectBatch(
      [
        presence("gone", "offline", longAgo),
        presence("here", "online", longAgo),
        presence("recent", "offline", NOW - 86_400_000),
      ],
      projector,
    );
    const item = async (uid: string) =>
      (await doc.send(new GetCommand({ TableName: tables.presence, Key: { pk: `r-app#${uid}` } }))).Item;
    const recentExpiry = (await item("recent"))?.expiresAt;

    // Act
    const report = await applyRetention({ s3: env.s3, bucket: env.bucket, doc, tables }, windows, NOW);

    // Assess: the recording past its window deleted; the archive's objects are the sweep's (the
    // rollup timer's, under the archive lease: below), left here.
    const left = (await listObjects(env.s3, env.bucket, "")).map((o) => o.key);
    expect(left).not.toContain(keys.oldRecording);
    expect(left).toEqual(
      expect.arrayContaining([
        keys.old,
        keys.kept,
        keys.newRecording,
        keys.ledger,
        keys.oldImport,
        keys.keptImport,
      ]),
    );
    expect(windows.archiveDays).toBe(400);
    expect(await item("gone")).toBeUndefined();
    expect(await item("here")).toMatchObject({ status: "online" });
    expect(await item("here")).not.toHaveProperty("expiresAt");
    expect(recentExpiry).toBe(Math.floor((NOW - 86_400_000) / 1000) + 402 * 86_400);
    expect(await item("recent")).toBeDefined();
    expect(report).toEqual({ objectsDeleted: 1, itemsDeleted: 1 });
  });

  it("keeps an item the projector opened again between the sweep's read and its delete (the rev condition, as every writer of an item; DynamoDB's TTL also checks the expiry again)", async () => {
    // Prepare: a user offline for longer than the window; the sweep's client runs the projector
    // (the user back online: the item open again, no `expiresAt`) just before its first delete.
    const windows = retentionWindows({ retainArchiveDays: 400, expireOfflinePresenceDays: 402 });
    const tables = await env.tableSet();
    const projector = { ...env.depsFor(projectionStores(env.dynamo, tables)), itemExpiryDays: windows.items };
    const longAgo = NOW - 403 * 86_400_000;
    await projectBatch([presence("back", "offline", longAgo)], projector);
    const { dynamo } = testClients();
    let reopened = false;
    beforeCommand(
      dynamo,
      /^Delete(Item)?Command$/,
    )(async () => {
      await projectBatch([presence("back", "online", NOW - 1000)], projector);
      reopened = true;
    });
    const sweep = { s3: env.s3, bucket: env.bucket, doc: documentClient(dynamo), tables };

    // Act
    const report = await applyRetention(sweep, { prefixes: {}, items: windows.items }, NOW);

    // Assess: the user online, their item kept; nothing deleted.
    const { Item } = await doc.send(
      new GetCommand({ TableName: tables.presence, Key: { pk: "r-app#back" } }),
    );
    expect(reopened).toBe(true);
    expect(Item).toMatchObject({ status: "online" });
    expect(Item).not.toHaveProperty("expiresAt");
    expect(report.itemsDeleted).toBe(0);
  });
});

/**
 * The archive swept by the day in its keys (the review of #40, B): S3's lifecycle counts from an
 * object's last write, and a rewrite resets it; the schedule (the rollup function deployed, the
 * rollup timer locally: `scheduledRollup`) deletes once a day, under the archive lease, what a
 * day-dated prefix holds past the archive's window, whenever it was written.
 */
describe("the schedule's expiry sweep", () => {
  /** A bucket with the day before `now` final in the ledger, and the schedule at `now` with a 400-day sweep. */
  async function scheduled(now: number) {
    const bucket = await createBucket(env.s3, uniqueName("sweep"));
    const activityTable = uniqueName("activity");
    await createActivityTable(env.dynamo, activityTable);
    const ledger = blobRollupLedger(s3BlobStore(env.s3, bucket));
    const yesterday = addDays(utcDay(now), -1);
    await ledger.record({
      day: yesterday,
      computedAt: now - 3_600_000,
      final: true,
      queries: 1,
      bytesScanned: 0,
      apps: {},
    });
    const table = { doc, tableName: activityTable };
    const deps: RollupDependencies = {
      engine: duckDbEngine({ s3: env.s3, bucket }),
      store: dynamoActivityStore(doc, activityTable),
      now: () => now,
      graceMs: 7_200_000,
      ledger,
      archiveLock: archiveLease(table, () => now),
      expirySweep: archiveExpirySweep(env.s3, bucket, 400),
    };
    return { bucket, ledger, table, deps, yesterday };
  }
  const put = (bucket: string, key: string) =>
    env.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x" }));

  it("deletes what a day-dated prefix holds past the window, whenever it was written; keeps what is within it; once a day", async () => {
    // Prepare: a day 500 days back (past the window) and one 100 days back (within), by the
    // emulator's clock. Each day-dated prefix holds an object of the old day written just now: a
    // rewrite, whose lifecycle clock (its LastModified) has 400 days to run.
    const written = Date.now();
    const oldDay = addDays(utcDay(written), -500);
    const keptDay = addDays(utcDay(written), -100);
    const old = [
      `raw/date=${oldDay}/hour=00/rewritten.ndjson.gz`,
      `edge/date=${oldDay}/e.ndjson.gz`,
      `compact/date=${oldDay}/manifest.json`,
      `users/date=${oldDay}/users.ndjson.gz`,
      `users/first-seen/date=${oldDay}/users.ndjson.gz`,
      `users/conversations/first-seen/date=${oldDay}/conversations.ndjson.gz`,
      `users/members/date=${oldDay}/members.ndjson.gz`,
      `imports/users/date=${oldDay}/users.ndjson.gz`,
    ];
    const kept = [
      `raw/date=${keptDay}/hour=00/kept.ndjson.gz`,
      `users/date=${keptDay}/users.ndjson.gz`,
      `imports/users/date=${keptDay}/users.ndjson.gz`,
      // Not the sweep's: keyed by app first (the lifecycle's), and the ledger (kept).
      `quarantine/app=a/date=${oldDay}/e.json`,
      `rollup/date=${oldDay}.json`,
    ];
    const probe = await createBucket(env.s3, uniqueName("probe"));
    await put(probe, "lastModified");
    const head = await env.s3.send(new HeadObjectCommand({ Bucket: probe, Key: "lastModified" }));
    const lastModified = head.LastModified?.getTime() ?? 0;
    // The tick the day after the objects are written: the lifecycle would keep them 399 more days.
    const { bucket, ledger, deps, yesterday } = await scheduled(lastModified + 86_400_000);
    for (const key of [...old, ...kept]) await put(bucket, key);
    expect(isExpired(utcDay(lastModified), 400, deps.now())).toBe(false);

    // Act: a tick after yesterday's final pass, then another.
    const first = await scheduledRollup(deps);
    const second = await scheduledRollup(deps);

    // Assess
    const left = (await listObjects(env.s3, bucket, "")).map((o) => o.key);
    for (const key of old) expect(left, key).not.toContain(key);
    for (const key of kept) expect(left, key).toContain(key);
    expect(first.failures).toEqual([]);
    expect(first.sweep?.objectsDeleted).toBe(old.length);
    expect(first.sweep?.swept).toHaveLength(old.length);
    expect((await ledger.pass(yesterday))?.sweptAt).toBe(deps.now());
    expect(second.sweep).toBeUndefined();
  });

  it("defers while another rewrite holds the archive lease, and sweeps at a later tick", async () => {
    // Prepare: an old object; an erasure holding the lease.
    const { bucket, table, deps, yesterday } = await scheduled(NOW);
    const key = "raw/date=2026-04-01/hour=00/held.ndjson.gz";
    await put(bucket, key);
    await acquireArchiveLease(table, "erasure e1", NOW);

    // Act
    const held = await scheduledRollup(deps);
    const kept = (await listObjects(env.s3, bucket, "raw/")).map((o) => o.key);
    await releaseArchiveLease(table, "erasure e1");
    const after = await scheduledRollup(deps);

    // Assess
    expect(held.sweepsDeferred).toEqual([yesterday]);
    expect(held.failures).toEqual([]);
    expect(kept).toEqual([key]);
    expect(after.sweep?.objectsDeleted).toBe(1);
    expect(await listObjects(env.s3, bucket, "raw/")).toEqual([]);
  });
});

describe("the sweep keeps every retained day's figures (#50, defect 8)", () => {
  it("a user imported on 03-01 as created in 2020, first active on 03-06, a 30-day window: the sweep of 04-02 keeps 03-06's newUsers at 1 (the record carried to 03-06), and the sweep after 03-06 expires removes it", async () => {
    // Prepare: the import records of 03-01 (one user active later, one never), and 03-06's sets:
    // the imported user and a new one, first seen that day.
    const bucket = await createBucket(env.s3, uniqueName("sweep-imports"));
    const app = "r8";
    const importedAt = Date.UTC(2026, 2, 1, 12) / 1000;
    const imported = [
      { app, uid: "imported", createdAt: Date.UTC(2020, 0, 1) / 1000, importedAt },
      { app, uid: "never-active", createdAt: Date.UTC(2020, 0, 1) / 1000, importedAt },
    ];
    await env.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: importDayKey("users", "2026-03-01"),
        Body: encodeImportedUsers(imported),
      }),
    );
    const sets = s3UserSets(env.s3, bucket);
    await writeDayUsers(sets, "2026-03-06", new Map([[app, [{ uid: "fresh" }, { uid: "imported" }]]]));
    const day = "2026-03-06";
    const figures = async () => (await usersOverTime(sets, app, day, day, day)).days[0];
    const bySql = async () =>
      (
        await duckDbEngine({ s3: env.s3, bucket }).query(
          readQuery("users-over-time"),
          { app, from: day, to: day },
          { sets: { from: addDays(day, -30), to: day } },
        )
      ).rows[0]?.new_users;
    const before = { ts: (await figures())?.newUsers, sql: await bySql() };
    const sweep = archiveExpirySweep(env.s3, bucket, 30);

    // Act: the sweep of 04-02 (03-01 expired, 03-06 kept), then the one of 04-08 (03-06 expired).
    const first = await sweep(Date.UTC(2026, 3, 2, 1), async () => {});
    const after = { ts: (await figures())?.newUsers, sql: await bySql() };
    const importsAfterFirst = (await listObjects(env.s3, bucket, "imports/")).map((o) => o.key);
    const carried = await s3ImportRecords(env.s3, bucket).users(app);
    const second = await sweep(Date.UTC(2026, 3, 8, 1), async () => {});

    // Assess: 03-06's figure unchanged by the first sweep, by TypeScript and by SQL; the record the
    // figure depends on moved to 03-06 (the one no kept day depends on gone); nothing left after
    // 03-06 expired.
    expect(before).toEqual({ ts: 1, sql: 1 });
    expect(after).toEqual(before);
    expect(first.swept).toContain("imports/users/date=2026-03-01/");
    expect(first.carried).toBe(1);
    expect(importsAfterFirst).toEqual([importDayKey("users", day)]);
    expect([...carried.values()]).toEqual([imported[0]]);
    expect(second.swept).toContain(`imports/users/date=${day}/`);
    expect(second.carried).toBe(0);
    expect(await listObjects(env.s3, bucket, "imports/")).toEqual([]);
  });
});
