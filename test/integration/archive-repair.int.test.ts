import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import {
  type ArchiveRewriter,
  compactManifestKey,
  parseCompactionManifest,
} from "../../shared/analytics/compaction";
import { duckDbCompactor } from "../../shared/analytics/engines/duckdb-compactor";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import {
  parseRawArchiveObject,
  quarantineKey,
  rawArchiveHourPrefix,
} from "../../shared/contracts/bucket-layout";
import { redactArchiveLine } from "../../shared/erasure/redact";
import { S3_PREFIX } from "../../shared/platform/constants";
import type { BlobStore } from "../../shared/ports/blob-store";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveLine, quarantine } from "../../shared/projector/raw-archive";
import { createActivityTable } from "../../tools/local/provision";
import { rederiveArchive, replayQuarantine } from "../../tools/ops/archive-repair";
import { listKeys } from "../../tools/ops/inspect";
import { createBucket, createQueue, testClients, uniqueName } from "../support/aws";
import { fixture, type Loose } from "../support/fixtures";

const clients = testClients();
let bucket: string;
let archive: BlobStore;
/** The lease in an activity table of DynamoDB Local; no compactor unless a test gives one. */
let rewriter: ArchiveRewriter;

beforeAll(async () => {
  bucket = await createBucket(clients.s3, uniqueName("repair"));
  archive = s3BlobStore(clients.s3, bucket);
  const table = uniqueName("activity");
  await createActivityTable(clients.dynamo, table);
  rewriter = {
    lease: archiveLease({ doc: documentClient(clients.dynamo), tableName: table }, Date.now),
    now: Date.now,
  };
});

function queued(body: Loose, appId: string, receivedAt: number): QueuedEvent {
  body.appId = appId;
  const text = JSON.stringify(body);
  const eventId = createHash("sha256").update(text).digest("hex");
  return {
    messageId: `m-${eventId.slice(0, 8)}`,
    eventId,
    receivedAt,
    trigger: body.trigger,
    appId,
    body: text,
  };
}

describe("archive repair after #30 (live edits and deletes)", () => {
  it("derives again the natural key and time of edits archived before: the edited message and its edit time; a second run changes nothing", async () => {
    // Prepare: a published-layout edit archived as before, keyed by the action message's id and
    // timed by its sentAt (a day before the edit, to move it to another day).
    const appId = uniqueName("app");
    const edit = fixture("message_edited");
    const event = queued(edit, appId, Date.UTC(2026, 0, 3, 12));
    const today = archiveLine(event);
    const before = { ...today, naturalKey: `${appId}|message_edited|2`, eventTime: Date.UTC(2026, 0, 2, 12) };
    const key = `${rawArchiveHourPrefix(event.receivedAt)}old.ndjson.gz`;
    await archive.put(key, gzipSync(`${JSON.stringify(before)}\n`));

    // Act
    const first = await rederiveArchive(clients.s3, archive, { appId }, rewriter);
    const second = await rederiveArchive(clients.s3, archive, { appId }, rewriter);

    // Assess
    expect(first).toMatchObject({ changed: 1, rewritten: 1, byTrigger: { message_edited: 1 } });
    const [line] = parseRawArchiveObject(await archive.getBytes(key), key);
    expect(line?.naturalKey).toBe(`${appId}|message_edited|1|1696934985`);
    expect(line?.eventTime).toBe(1696934985000);
    expect(line?.body).toBe(event.body);
    // Its edit day (2023-10-10) is not its receipt day: an edge copy now serves that day.
    expect(first.edges).toBe(1);
    expect(await listKeys(clients.s3, bucket, `${S3_PREFIX.edge}date=2023-10-10/`)).toHaveLength(1);
    expect(second).toMatchObject({ changed: 0, rewritten: 0, edges: 0 });
  });

  it("rederives a compacted day under the archive lease and compacts it again: archive_events gives the new key and time, once (#40 item 6)", async () => {
    // Prepare: an edit archived with the old derivation on a receipt day then compacted to
    // Parquet, beside a line that stays as it is; the activity table holds the lease.
    const appId = uniqueName("app");
    const day = "2026-01-05";
    const event = queued(fixture("message_edited"), appId, Date.UTC(2026, 0, 5, 12));
    const fresh = archiveLine(event);
    const stale = { ...fresh, naturalKey: `${appId}|message_edited|2`, eventTime: Date.UTC(2026, 0, 5, 11) };
    const kept = archiveLine(queued(fixture("message_sent"), appId, Date.UTC(2026, 0, 5, 12, 1)));
    const key = `${rawArchiveHourPrefix(event.receivedAt)}old.ndjson.gz`;
    await archive.put(key, gzipSync(`${JSON.stringify(stale)}\n${JSON.stringify(kept)}\n`));
    const compactor = duckDbCompactor({ s3: clients.s3, bucket });
    const compacted = await compactor.compactDay(day);
    const { lease } = rewriter;
    const rewrite = { ...rewriter, compactor };
    const engine = duckDbEngine({ s3: clients.s3, bucket });
    const edits = async (scope: Record<string, unknown>) =>
      (
        await engine.query(
          `SELECT natural_key, event_time FROM ${scope.edges ? "archive_edges" : "archive_events"}
           WHERE app = :app AND trigger = 'message_edited'`,
          { app: appId },
          scope,
        )
      ).rows;

    // Act: while an erasure holds the lease, refused with nothing changed; then run.
    await lease.acquire("erasure e1");
    await expect(rederiveArchive(clients.s3, archive, { appId }, rewrite)).rejects.toEqual(
      expect.objectContaining({ name: "ArchiveLockedError", holder: "erasure e1" }),
    );
    const untouched = parseRawArchiveObject(await archive.getBytes(key), key);
    await lease.release("erasure e1");
    const report = await rederiveArchive(clients.s3, archive, { appId }, rewrite);
    const again = await rederiveArchive(clients.s3, archive, { appId }, rewrite);

    // Assess: the receipt day's Parquet holds the rederived line (no old key left to count on the
    // receipt day beside the edge copy that serves its edit day), and the line that stayed.
    expect(untouched[0]?.naturalKey).toBe(stale.naturalKey);
    expect(report).toMatchObject({ changed: 1, rewritten: 1, edges: 1, recompacted: [day] });
    expect(await edits({ from: day, to: day })).toEqual([
      { natural_key: fresh.naturalKey, event_time: fresh.eventTime },
    ]);
    const editDay = new Date(fresh.eventTime ?? 0).toISOString().slice(0, 10);
    expect(await edits({ edges: { from: editDay, to: editDay } })).toEqual([
      { natural_key: fresh.naturalKey, event_time: fresh.eventTime },
    ]);
    const manifest = parseCompactionManifest(
      await archive.getText(compactManifestKey(day)),
      compactManifestKey(day),
    );
    expect(manifest.sources).toEqual(compacted.sources);
    expect(manifest.rows).toBe(2);
    expect(again).toMatchObject({ changed: 0, rewritten: 0, recompacted: [] });
  });

  it("replays the quarantine: live edits and deletes go back on the events queue at their first receipt, what is still refused stays", async () => {
    // Prepare: what the projector quarantined before #30, and a body that is still invalid.
    const appId = uniqueName("app");
    const queueUrl = await createQueue(clients.sqs, uniqueName("events"));
    const receivedAt = Date.UTC(2026, 8, 4, 10);
    const edit = queued(fixture("observed-live/message_edited.live"), appId, receivedAt);
    const del = queued(fixture("observed-live/message_deleted.live"), appId, receivedAt + 1);
    const broken = fixture("message_sent");
    delete broken.data.message.id;
    const invalid = queued(broken, appId, receivedAt + 2);
    const old = 'message_edited: data.message.data.action: Invalid input: expected "edited"';
    for (const e of [edit, del, invalid]) await quarantine(e, old, archive, () => receivedAt + 10);

    // Act
    const dry = await replayQuarantine(clients, { bucket, queueUrl }, rewriter.lease, {
      appId,
      dryRun: true,
    });
    const report = await replayQuarantine(clients, { bucket, queueUrl }, rewriter.lease, { appId });

    // Assess
    expect(dry).toMatchObject({ dryRun: true, resent: { message_edited: 1, message_deleted: 1 } });
    expect(report.records).toBe(3);
    expect(report.resent).toEqual({ message_edited: 1, message_deleted: 1 });
    expect(report.stillRefused.message_sent?.count).toBe(1);
    const left = await listKeys(clients.s3, bucket, `${S3_PREFIX.quarantine}app=${appId}/`);
    expect(left).toHaveLength(1);
    const out = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ["All"],
      }),
    );
    const sent = (out.Messages ?? []).map((m) => m.MessageAttributes?.receivedAt?.StringValue).sort();
    expect(sent).toEqual([String(receivedAt), String(receivedAt + 1)]);
  });

  it("leaves a quarantine record an erasure redacted where it is, even when the redaction made it acceptable (#50)", async () => {
    // Prepare: a join refused for its member's avatar (a number), quarantined; the member erased,
    // the record redacted as the erasure redacts it (the avatar removed: the body now passes).
    const appId = uniqueName("app");
    const queueUrl = await createQueue(clients.sqs, uniqueName("events"));
    const receivedAt = Date.UTC(2026, 8, 4, 10);
    const body = fixture("group_member_joined");
    body.data.members["cometchat-uid-2"].avatar = 404;
    const join = queued(body, appId, receivedAt);
    await quarantine(join, "group_member_joined: avatar: expected string", archive, () => receivedAt);
    const key = quarantineKey(appId, receivedAt, join.eventId);
    const redacted = redactArchiveLine(await archive.getText(key), appId, {
      uid: "cometchat-uid-2",
      names: ["George Alan"],
      pseudonym: "erased-0123456789abcdef",
      erasureId: "e1",
    });
    if (!redacted) throw new Error("the record names the member");
    await archive.put(key, redacted, { contentType: "application/json" });

    // Act
    const dry = await replayQuarantine(clients, { bucket, queueUrl }, rewriter.lease, {
      appId,
      dryRun: true,
    });
    const report = await replayQuarantine(clients, { bucket, queueUrl }, rewriter.lease, { appId });

    // Assess: nothing put back, the record kept, counted as redacted.
    const out = await clients.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect((out.Messages ?? []).map((m) => m.Body)).toEqual([]);
    expect(await listKeys(clients.s3, bucket, `${S3_PREFIX.quarantine}app=${appId}/`)).toEqual([key]);
    expect(dry).toMatchObject({ records: 1, resent: {}, redacted: 1 });
    expect(report).toMatchObject({ records: 1, resent: {}, stillRefused: {}, redacted: 1 });
  });
});
