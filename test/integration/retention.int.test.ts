import { createHash } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { projectBatch } from "../../shared/projector/core";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { projectionStores } from "../../shared/projector/stores";
import { applyRetention, isExpired, keyDay, retentionWindows } from "../../tools/local/retention";
import { beforeCommand, testClients } from "../support/aws";
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

  it("deletes the objects and the closed items past their windows, keeps the rest, and the projector dates each closed item", async () => {
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

    // Assess
    const left = (await listObjects(env.s3, env.bucket, "")).map((o) => o.key);
    expect(left).not.toContain(keys.old);
    expect(left).not.toContain(keys.oldRecording);
    expect(left).not.toContain(keys.oldImport);
    expect(left).toEqual(
      expect.arrayContaining([keys.kept, keys.newRecording, keys.ledger, keys.keptImport]),
    );
    expect(await item("gone")).toBeUndefined();
    expect(await item("here")).toMatchObject({ status: "online" });
    expect(await item("here")).not.toHaveProperty("expiresAt");
    expect(recentExpiry).toBe(Math.floor((NOW - 86_400_000) / 1000) + 402 * 86_400);
    expect(await item("recent")).toBeDefined();
    expect(report).toEqual({ objectsDeleted: 3, itemsDeleted: 1 });
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
