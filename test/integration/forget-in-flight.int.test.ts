import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { quarantineKey } from "../../shared/contracts/bucket-layout";
import { dynamoErasedSubjects, ERASED_MARK_DAYS } from "../../shared/erasure/erased-subjects";
import { erasureSubject } from "../../shared/erasure/erasure-state";
import { forget } from "../../shared/erasure/forget";
import { erasedInFlight } from "../../shared/erasure/in-flight";
import { mentionsUid } from "../../shared/erasure/redact";
import { type BatchDependencies, projectSqsBatch } from "../../shared/projector/batch";
import { projectBatch } from "../../shared/projector/core";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable, createAppsTable } from "../../tools/local/provision";
import { ingestRecordFor, sqsEvent } from "../../tools/local/sqs-event";
import { scanArchive } from "../../tools/ops/archive-scan";
import { uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { appItems, delivery, entity, erasureDeps, groupJoinedByU1, U1, U4 } from "./forget-support";

/**
 * An event in flight across an erasure (#50, "also found"), on DynamoDB Local, fauxqs and DuckDB:
 * queued when `forget` ran and projected after it, it brought the uid back (a presence, a
 * membership's `by`) until a second run. The erasure now marks the user in the apps table (a hash,
 * never the uid), and the projector redacts such a delivery before it archives or projects it.
 */
const env = projectorOnEmulators("forget-in-flight");
const T0 = Date.UTC(2026, 6, 1, 9);
const NOW = Date.UTC(2026, 6, 10);

/** U1 in U3's group, archived and projected; an apps table for the marks; the projector's batch step over both. */
async function world() {
  const appId = uniqueName("inflight");
  const tables = await env.tableSet();
  const activityTable = uniqueName("activity");
  await createActivityTable(env.dynamo, activityTable);
  const appsTable = uniqueName("apps");
  await createAppsTable(env.dynamo, appsTable);
  const doc = documentClient(env.dynamo);
  const subjects = dynamoErasedSubjects(doc, appsTable);
  const projector = env.depsFor(projectionStores(env.dynamo, tables));
  const history = groupJoinedByU1(appId, "g", T0);
  await archiveBatch(history, projector.dataStore);
  await projectBatch(history, projector);
  let reads = 0;
  const batchDeps: BatchDependencies = {
    ...projector,
    redactErased: erasedInFlight(
      async (now) => {
        reads++;
        return subjects.list(now);
      },
      { cacheMs: 60_000, now: () => NOW },
    ),
  };
  const site = { ...env, bucket: env.bucket, tables, activityTable, now: NOW };
  return { appId, tables, appsTable, doc, subjects, site, batchDeps, reads: () => reads };
}

/** U1's deliveries received before the erasure and still queued: they come online, and add U4 to the group. */
function inFlight(appId: string) {
  return [
    delivery("user_connection_status_changed", appId, T0 + 60_000, (b) => {
      b.data.timestamp = T0 + 60_000;
      b.data.user = entity(U1, "Andrew Joseph");
    }),
    delivery("group_member_added", appId, T0 + 61_000, (b) => {
      b.data.group = { ...b.data.group, guid: "g", conversationId: "group_g", owner: "cometchat-uid-3" };
      b.data.members = { [U4]: entity(U4, "Dan Moe") };
      b.data.by = entity(U1, "Andrew Joseph");
    }),
    delivery("group_member_added", appId, T0 + 62_000, (b) => {
      b.data.group = { ...b.data.group, guid: "g", conversationId: "group_g", owner: "cometchat-uid-3" };
      b.data.members = { [U1]: entity(U1, "Andrew Joseph") };
      b.data.by = entity(U4, "Dan Moe");
    }),
  ];
}

describe("a delivery in flight across an erasure", () => {
  it("is redacted by the projector after the erasure (the erasure's pseudonym, its mark): no item or line names the user, without a second run; one batch read nothing but the cache's one Query", async () => {
    // Prepare: the erasure, with the marks; the deliveries still queued.
    const w = await world();
    const queued = inFlight(w.appId);
    let slept = 0;
    const report = await forget(
      erasureDeps(w.site, {
        erased: { subjects: w.subjects, settleMs: 90_000 },
        sleep: async (ms) => {
          slept += ms;
        },
      }),
      { appId: w.appId, uid: U1, requestedBy: "test" },
    );

    // Act: the projector's batches of what was queued, after the erasure.
    for (const event of queued)
      await projectSqsBatch(
        sqsEvent([ingestRecordFor(event.body, event.receivedAt)]),
        undefined,
        w.batchDeps,
        env.silent(),
      );

    // Assess: nothing names U1; the membership's `by` is the pseudonym's, and nothing of the
    // pseudonym's own (no presence, no membership: the erasure deleted U1's, and the tables are as
    // if the deliveries had been projected before it); the lines carry the erasure; the list was
    // read once for every batch.
    const items = await appItems(env.dynamo, w.tables, w.appId);
    expect(mentionsUid(JSON.stringify(items), U1)).toBe(false);
    expect(JSON.stringify(items.presence ?? [])).not.toContain(report.pseudonym);
    expect(items.memberships?.find((m) => m.uid === U4)?.by).toBe(report.pseudonym);
    expect(items.memberships?.filter((m) => m.uid === report.pseudonym)).toEqual([]);
    const lines: Array<{ body: string; erasure?: string; receivedAt: number }> = [];
    await scanArchive(env.s3, env.bucket, { appId: w.appId }, "oldest", (line) => {
      lines.push(line);
    });
    expect(lines.filter((l) => mentionsUid(l.body, U1))).toEqual([]);
    const late = lines.filter((l) => l.receivedAt >= T0 + 60_000);
    expect(late.map((l) => l.erasure)).toEqual([report.erasureId, report.erasureId, report.erasureId]);
    expect(w.reads()).toBe(1);
    // The erasure waited until every projector had the mark (its clock stands still: the whole settle).
    expect(slept).toBe(90_000);
  }, 120_000);

  it("the mark holds a hash, the erasure's end and when it lapses, never the uid; a delivery received after the erasure ended is processed as received", async () => {
    // Prepare
    const w = await world();
    const report = await forget(erasureDeps(w.site, { erased: { subjects: w.subjects, settleMs: 0 } }), {
      appId: w.appId,
      uid: U1,
      requestedBy: "test",
    });
    const [presence] = inFlight(w.appId);
    const after = { ...presence, receivedAt: NOW + 1 };

    // Act
    await projectSqsBatch(
      sqsEvent([ingestRecordFor(presence?.body ?? "", after.receivedAt)]),
      undefined,
      w.batchDeps,
      env.silent(),
    );

    // Assess
    const stored = await w.doc.send(
      new QueryCommand({
        TableName: w.appsTable,
        KeyConditionExpression: "appId = :e",
        ExpressionAttributeValues: { ":e": "_erased" },
      }),
    );
    expect(stored.Items).toEqual([
      {
        appId: "_erased",
        record: erasureSubject(w.appId, U1),
        app: w.appId,
        erasureId: report.erasureId,
        pseudonym: report.pseudonym,
        until: NOW,
        expiresAt: NOW / 1000 + ERASED_MARK_DAYS * 86_400,
      },
    ]);
    expect(JSON.stringify(stored.Items)).not.toContain(U1);
    const items = await appItems(env.dynamo, w.tables, w.appId);
    expect(items.presence?.map((p) => p.uid)).toEqual([U1]);
  }, 120_000);

  it("a refused delivery redacted in flight stays refused: quarantined with the erasure's mark, no fact of it projected or archived", async () => {
    // Prepare: a join the projector refuses (its member's avatar a number), naming U1, still queued
    // when the erasure ran. The redaction drops the avatar, which would make the body acceptable.
    const w = await world();
    const refused = delivery("group_member_joined", w.appId, T0 + 60_000, (b) => {
      b.data.group = { ...b.data.group, guid: "g2", conversationId: "group_g2", owner: "cometchat-uid-3" };
      b.data.members = { [U1]: { ...entity(U1, "Andrew Joseph"), avatar: 404 } };
    });
    const report = await forget(erasureDeps(w.site, { erased: { subjects: w.subjects, settleMs: 0 } }), {
      appId: w.appId,
      uid: U1,
      requestedBy: "test",
    });

    // Act
    const response = await projectSqsBatch(
      sqsEvent([ingestRecordFor(refused.body, refused.receivedAt)]),
      undefined,
      w.batchDeps,
      env.silent(),
    );

    // Assess: refused as received, so refused redacted: its record in quarantine/ (marked, no U1),
    // no membership of the pseudonym in g2, its raw line with no fact.
    expect(response.batchItemFailures).toEqual([]);
    const record = JSON.parse(
      await env
        .depsFor(projectionStores(env.dynamo, w.tables))
        .dataStore.getText(quarantineKey(w.appId, refused.receivedAt, refused.eventId)),
    );
    expect(record.erasure).toBe(report.erasureId);
    expect(mentionsUid(JSON.stringify(record), U1)).toBe(false);
    const items = await appItems(env.dynamo, w.tables, w.appId);
    expect(items.memberships?.filter((m) => String(m.pk).endsWith("#g2"))).toEqual([]);
    const lines: Array<{ eventId: string; naturalKey?: string; erasure?: string }> = [];
    await scanArchive(env.s3, env.bucket, { appId: w.appId }, "oldest", (line) => {
      lines.push(line);
    });
    const line = lines.find((l) => l.eventId === refused.eventId);
    expect(line?.erasure).toBe(report.erasureId);
    expect(line?.naturalKey).toBeUndefined();
  }, 120_000);
});
