import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { DeleteCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { TOP_LIMIT } from "../../shared/analytics/figures";
import { rollupDay, rollupDayAllApps } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { objectText } from "../../shared/contracts/bucket-layout";
import { erasureRecords, pendingErasure } from "../../shared/erasure/erasure-state";
import { type ErasureNotice, type ForgetDependencies, forget } from "../../shared/erasure/forget";
import { mentionsUid } from "../../shared/erasure/redact";
import { projectBatch } from "../../shared/projector/core";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable } from "../../tools/local/provision";
import { uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { appItems, delivery, entity, erasureDeps, U1, U2, U3, U4 } from "./forget-support";

/**
 * What `forget` reaches besides the archive's lines (#40, items 2 and 5): the tables and the
 * figures searched on their own (an archive past its retention hides nothing they still hold), an
 * app id holding `#`, the archive's old layout, a whole app's ledger totals, and a dry run that
 * reports what the run does. DynamoDB Local, fauxqs, DuckDB; each test on days of its own (the
 * file's tests share one bucket).
 */
const env = projectorOnEmulators("forget-reach");
const doc = documentClient(env.dynamo);
const NOW = Date.UTC(2026, 5, 1);

/** A table set, an activity table and the erasure's dependencies over them. */
async function site() {
  const tables = await env.tableSet();
  const activityTable = uniqueName("activity");
  await createActivityTable(env.dynamo, activityTable);
  const where = { ...env, bucket: env.bucket, tables, activityTable, now: NOW };
  return {
    tables,
    activityTable,
    deps: (more: Partial<ForgetDependencies> = {}) => erasureDeps(where, more),
    projector: env.depsFor(projectionStores(env.dynamo, tables)),
  };
}

/** Archives and projects deliveries; returns the archive objects written. */
async function archiveAndProject(deliveries: QueuedEvent[], projector: ReturnType<typeof env.depsFor>) {
  const before = new Set((await listObjects(env.s3, env.bucket, "")).map((o) => o.key));
  await archiveBatch(deliveries, projector.dataStore);
  await projectBatch(deliveries, projector);
  return (await listObjects(env.s3, env.bucket, "")).map((o) => o.key).filter((k) => !before.has(k));
}

/**
 * A long-standing user on a day whose archive then expires: U1 created (owns) G1 and added U2 to
 * it, then their membership of G1 expired; U1 is a member of G2 (owned by U3) and kicked U4 from
 * it; U1 renamed G3 (owned by U3) without being a member; U1 sent the day's most messages.
 */
function longStanding(appId: string, at: number): QueuedEvent[] {
  const group = (guid: string, owner: string) => (g: Record<string, unknown>) => ({
    ...g,
    guid,
    owner,
    name: `Group ${guid}`,
    conversationId: `group_${guid}`,
  });
  let t = at;
  const next = () => (t += 1000);
  const messages = [1, 2, 3].map((n) =>
    delivery("message_sent", appId, next(), (b) => {
      Object.assign(b.data.message, { id: `m${n}`, sentAt: t / 1000, updatedAt: t / 1000 });
    }),
  );
  return [
    delivery("group_created", appId, next(), (b) => {
      b.data.group = group("g1", U1)(b.data.group);
      b.data.members = { [U1]: entity(U1, "Andrew Joseph") };
    }),
    delivery("group_member_added", appId, next(), (b) => {
      b.data.group = group("g1", U1)(b.data.group);
      b.data.members = { [U2]: entity(U2, "George Alan") };
      b.data.by = entity(U1, "Andrew Joseph");
    }),
    delivery("group_created", appId, next(), (b) => {
      b.data.group = group("g2", U3)(b.data.group);
      b.data.members = { [U3]: entity(U3, "Carol Ray") };
    }),
    ...[U1, U4].map((uid) =>
      delivery("group_member_joined", appId, next(), (b) => {
        b.data.group = group("g2", U3)(b.data.group);
        b.data.members = { [uid]: entity(uid, "A Member") };
      }),
    ),
    delivery("group_member_kicked", appId, next(), (b) => {
      b.data.group = group("g2", U3)(b.data.group);
      b.data.members = { [U4]: entity(U4, "Dan Moe") };
      b.data.by = entity(U1, "Andrew Joseph");
    }),
    delivery("group_updated", appId, next(), (b) => {
      b.data.group = { ...group("g3", U3)(b.data.group), updatedBy: U1, updatedAt: t / 1000 };
    }),
    ...messages,
  ];
}

describe("forget reaches what the archive no longer leads to (#40, item 2)", () => {
  it("with the raw objects deleted, finds the user from the tables (their memberships' groups and members, the groups and members a filtered scan finds) and from the stored top lists, which it rewrites in place", async () => {
    // Prepare: the history archived and projected, its day rolled up, then U1's membership of G1
    // expired and the day's archive gone (retainArchiveDays), as months later.
    const world = await site();
    const appId = uniqueName("expired");
    const day = "2026-01-10";
    const written = await archiveAndProject(longStanding(appId, Date.UTC(2026, 0, 10, 9)), world.projector);
    const deps = world.deps();
    await rollupDay(appId, day, deps.rollup);
    const store = dynamoActivityStore(doc, world.activityTable);
    const topBefore = await store.topUsers(appId, day, TOP_LIMIT);
    const figuresBefore = (await store.day(appId, day))?.figures;
    expect(topBefore.map((u) => u.uid)).toContain(U1);
    await doc.send(
      new DeleteCommand({ TableName: world.tables.memberships, Key: { pk: `${appId}#g1`, uid: U1 } }),
    );
    for (const key of written) await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: key }));

    // Act
    const dry = await forget(deps, { appId, uid: U1, dryRun: true, requestedBy: "test" });
    const report = await forget(deps, { appId, uid: U1, requestedBy: "test" });

    // Assess: the dry run's pseudonym was its own draw, and it says so (#61); the run's is another.
    expect(dry.drawnForDryRun).toBe(true);
    expect(dry.pseudonym).not.toBe(report.pseudonym);
    // No item of the app holds U1; the groups and members hold the pseudonym.
    const pseudonym = report.pseudonym ?? "";
    const items = await appItems(env.dynamo, world.tables, appId);
    expect(
      Object.values(items)
        .flat()
        .filter((i) => mentionsUid(JSON.stringify(i), U1)),
    ).toEqual([]);
    const group = (guid: string) => items.groups?.find((g) => g.guid === guid);
    const member = (guid: string, uid: string) =>
      items.memberships?.find((m) => m.guid === guid && m.uid === uid);
    expect(group("g1")?.owner).toBe(pseudonym);
    expect(member("g1", U2)?.by).toBe(pseudonym);
    expect(member("g2", U4)).toMatchObject({ status: "kicked", by: pseudonym });
    expect(member("g2", U1)).toBeUndefined();
    expect(group("g3")?.updatedBy).toBe(pseudonym);
    // The day's top list names the pseudonym, rank for rank; its figures are as they were.
    expect(report.plan.topListDays).toEqual([day]);
    expect(report.counts).toMatchObject({ topListsRewritten: 1, daysRecomputed: 0 });
    expect(await store.topUsers(appId, day, TOP_LIMIT)).toEqual(
      topBefore.map((u) => ({ ...u, uid: u.uid === U1 ? pseudonym : u.uid })),
    );
    expect((await store.day(appId, day))?.figures).toEqual(figuresBefore);
    // The dry run said what the run did.
    expect(dry.plan.items).toHaveLength(report.counts.itemsDeleted + report.counts.itemsRedacted);
    for (const count of ["itemsDeleted", "itemsRedacted", "topListsRewritten", "daysRecomputed"] as const)
      expect(dry.counts[count], count).toBe(report.counts[count]);
  }, 120_000);
});

describe("forget's edges (#40, item 5)", () => {
  it("erases a whole app exactly: another app whose id begins with its id and # keeps its items and figures", async () => {
    // Prepare: apps `<p>` and `<p>#q`, each with a group and a day of figures.
    const world = await site();
    const app = uniqueName("hash");
    const neighbour = `${app}#q`;
    const day = "2026-02-10";
    for (const appId of [app, neighbour]) {
      await archiveAndProject(longStanding(appId, Date.UTC(2026, 1, 10, 9)), world.projector);
      await rollupDay(appId, day, world.deps().rollup);
    }
    const neighbourBefore = await appItems(env.dynamo, world.tables, neighbour);
    const store = dynamoActivityStore(doc, world.activityTable);
    const figuresBefore = await store.day(neighbour, day);

    // Act
    await forget(world.deps(), { appId: app, requestedBy: "test" });

    // Assess
    expect(Object.values(await appItems(env.dynamo, world.tables, app)).flat()).toEqual([]);
    expect(await store.day(app, day)).toBeUndefined();
    expect(await appItems(env.dynamo, world.tables, neighbour)).toEqual(neighbourBefore);
    expect(await store.day(neighbour, day)).toEqual(figuresBefore);
    expect(await store.topUsers(neighbour, day, TOP_LIMIT)).not.toEqual([]);
  }, 120_000);

  it.each([
    { lists: "name the user", rolledUp: "with U1's lines" },
    { lists: "do not name the user", rolledUp: "before U1's lines came" },
  ])(
    "a dry run counts what the run does for a day of the user's lines whose archive has expired and whose top lists $lists (the simulation's template day, 2023-10-10)",
    async ({ rolledUp }) => {
      // Prepare: messages received on 2026-05-30 whose event day is the platform's template day
      // (2023-10-10: its lines are under that day's edge); that day rolled up with U1 as its busiest
      // sender, or before any line of theirs came (U2's own messages), then its archive expired
      // (this test's edge objects of the day deleted: the sweep past retainArchiveDays).
      const world = await site();
      const appId = uniqueName("template-day");
      const day = "2023-10-10";
      const messages = (sender: string, from: number) =>
        [1, 2, 3].map((n) =>
          delivery("message_sent", appId, Date.UTC(2026, 4, 30, 9, 0, from + n), (b) => {
            Object.assign(b.data.message, { id: `${sender}-m${n}`, sender, receiver: U3 });
            b.data.message.conversationId = `${sender}_user_${U3}`;
          }),
        );
      const written = await archiveAndProject(messages(U2, 0), world.projector);
      const deps = world.deps();
      if (rolledUp === "before U1's lines came") await rollupDay(appId, day, deps.rollup);
      written.push(...(await archiveAndProject(messages(U1, 10), world.projector)));
      if (rolledUp === "with U1's lines") await rollupDay(appId, day, deps.rollup);
      const store = dynamoActivityStore(doc, world.activityTable);
      const named = (await store.topUsers(appId, day, TOP_LIMIT)).some((u) => u.uid === U1);
      expect(named).toBe(rolledUp === "with U1's lines");
      const edges = written.filter((k) => k.startsWith(`edge/date=${day}/`));
      expect(edges.length).toBeGreaterThan(0);
      for (const key of edges) await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: key }));

      // Act
      const dry = await forget(deps, { appId, uid: U1, dryRun: true, requestedBy: "test" });
      const report = await forget(deps, { appId, uid: U1, requestedBy: "test" });

      // Assess: the dry run's counts are the run's (before: "1 top lists to rewrite" for a day whose
      // lists do not name the user, which the run then rewrote none of), and true.
      expect(dry.counts).toEqual(report.counts);
      expect(dry.plan.topListDays).toEqual(report.plan.topListDays);
      expect(report.counts.topListsRewritten).toBe(named ? 1 : 0);
      expect((await store.topUsers(appId, day, TOP_LIMIT)).some((u) => mentionsUid(u.uid, U1))).toBe(false);
    },
    120_000,
  );

  it("rewrites the archive's objects still in the old per-app layout (a user), deletes them (the whole app)", async () => {
    // Prepare: an object of the layout before the batch one, its lines the app's.
    const world = await site();
    const appId = uniqueName("old-layout");
    const key = `raw/app=${encodeURIComponent(appId)}/date=2025-12-01/batch-1.ndjson.gz`;
    const lines = longStanding(appId, Date.UTC(2025, 11, 1, 9)).map((e) =>
      JSON.stringify({
        eventId: e.eventId,
        receivedAt: e.receivedAt,
        trigger: e.trigger,
        appId,
        body: e.body,
      }),
    );
    await env.s3.send(
      new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: gzipSync(`${lines.join("\n")}\n`) }),
    );
    const text = async () => {
      const out = await env.s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: key }));
      return objectText((await out.Body?.transformToByteArray()) ?? new Uint8Array());
    };
    expect(mentionsUid(await text(), U1)).toBe(true);

    // Act: the user, then the whole app.
    const user = await forget(world.deps(), { appId, uid: U1, requestedBy: "test" });
    const redacted = await text();
    const app = await forget(world.deps(), { appId, requestedBy: "test" });

    // Assess
    expect(user.plan.objects).toContain(key);
    expect(mentionsUid(redacted, U1)).toBe(false);
    expect(redacted.split("\n").filter((l) => l.trim())).toHaveLength(lines.length);
    expect(app.plan.objects).toContain(key);
    expect((await listObjects(env.s3, env.bucket, `raw/app=${encodeURIComponent(appId)}/`)).length).toBe(0);
  }, 120_000);

  it("drops a compaction still under way on a day it rewrites (an Athena CTAS left running at the schedule's deadline, no manifest yet): stopped, its files removed, the day compacted again, never adopted with the user's lines (#40 review)", async () => {
    // Prepare: the user's lines on a day of this test's own, and a CTAS's marker and first file.
    const world = await site();
    const appId = uniqueName("ctas");
    const day = "2025-10-07";
    await archiveAndProject(longStanding(appId, Date.UTC(2025, 9, 7, 9)), world.projector);
    const hash = "0123456789abcdef0123456789abcdef";
    const underWay = [
      `compact/date=${day}/${hash}.ctas.json`,
      `compact/date=${day}/${hash}/bucket-00000.parquet`,
    ];
    await env.s3.send(
      new PutObjectCommand({
        Bucket: env.bucket,
        Key: underWay[0],
        Body: JSON.stringify({ attempt: 0, nonce: "n", queryId: "q-before" }),
      }),
    );
    await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: underWay[1], Body: "PAR1" }));
    const stopped: string[] = [];
    const compactedAgain: string[] = [];
    const compactor = {
      stopDay: async (d: string) => {
        stopped.push(d);
      },
      compactDay: async (d: string) => {
        compactedAgain.push(d);
        return { day: d, parquet: [], sources: [], rows: 0, bytes: 0, compactedAt: NOW };
      },
    };

    // Act
    const report = await forget(world.deps({ compactor }), { appId, uid: U1, requestedBy: "test" });

    // Assess
    expect(stopped).toEqual([day]);
    expect(compactedAgain).toEqual([day]);
    expect(report.counts.daysRecompacted).toBe(1);
    expect((await listObjects(env.s3, env.bucket, `compact/date=${day}/`)).map((o) => o.key)).toEqual([]);
  }, 120_000);

  it("a whole app leaves the rollup ledger (its digests and totals), every other app's entries as they were; its dry run reports what the run does", async () => {
    // Prepare: two apps on a day passed over by a final pass that keeps the ledger.
    const world = await site();
    const [app, other] = [uniqueName("ledger"), uniqueName("kept")];
    const day = "2026-03-10";
    for (const appId of [app, other])
      await archiveAndProject(longStanding(appId, Date.UTC(2026, 2, 10, 9)), world.projector);
    const ledger = blobRollupLedger(s3BlobStore(env.s3, env.bucket));
    const rollup = { ...world.deps().rollup, ledger };
    expect((await rollupDayAllApps(day, rollup)).failures).toEqual([]);
    const before = await ledger.pass(day);
    expect(Object.keys(before?.apps ?? {})).toEqual(expect.arrayContaining([app, other]));

    // Act
    const dry = await forget(world.deps({ rollup }), { appId: app, dryRun: true, requestedBy: "test" });
    const report = await forget(world.deps({ rollup }), { appId: app, requestedBy: "test" });

    // Assess
    const after = await ledger.pass(day);
    expect(after?.apps[app]).toBeUndefined();
    expect(after?.totals?.[app]).toBeUndefined();
    expect(after?.apps[other]).toBe(before?.apps[other]);
    expect(after?.totals?.[other]).toEqual(before?.totals?.[other]);
    expect(report.counts.ledgerPassesRewritten).toBe(1);
    for (const count of [
      "objectsRewritten",
      "objectsDeleted",
      "linesRemoved",
      "itemsDeleted",
      "ledgerPassesRewritten",
    ] as const)
      expect(dry.counts[count], count).toBe(report.counts[count]);
    expect(report.counts.itemsDeleted).toBeGreaterThan(0);
  }, 120_000);
});

describe("forget tells the stream", () => {
  it("calls onErased once the record is written; a failure there fails the run, and a re-run completes it", async () => {
    // Prepare
    const world = await site();
    const appId = uniqueName("notice");
    await archiveAndProject(longStanding(appId, Date.UTC(2026, 3, 10, 9)), world.projector);
    const notices: Array<ErasureNotice & { recorded: number }> = [];
    const table = { doc, tableName: world.activityTable };
    const telling =
      (fail: boolean): ForgetDependencies["onErased"] =>
      async (notice) => {
        notices.push({ ...notice, recorded: (await erasureRecords(table, appId)).length });
        if (fail) throw new Error("the stream is down");
      };

    // Act
    const failed = await forget(world.deps({ onErased: telling(true) }), {
      appId,
      uid: U1,
      requestedBy: "test",
    }).catch((error: Error) => error);
    const report = await forget(world.deps({ onErased: telling(false) }), {
      appId,
      uid: U1,
      requestedBy: "test",
    });

    // Assess: told twice (the failed run and its re-run), the same erasure, each after its record.
    expect(failed).toBeInstanceOf(Error);
    // The user is named by the hash a holder of their uid can match (never the uid), with the days
    // whose lines were redacted (what a consumer replays for what stands now).
    const told = {
      appId,
      erasureId: report.erasureId,
      pseudonym: report.pseudonym,
      subject: createHash("sha256").update(`${appId}\0${U1}`).digest("hex"),
      scope: "user",
      days: [...report.plan.days].sort(),
    };
    expect(report.plan.days.length).toBeGreaterThan(0);
    expect(notices.map(({ recorded, finishedAt: _f, ...n }) => [n, recorded])).toEqual([
      [told, 1],
      [told, 1],
    ]);
    expect(JSON.stringify(notices)).not.toContain(U1);
    expect(await pendingErasure(table, appId, U1)).toBeUndefined();
    expect(notices.at(-1)?.finishedAt).toBe(report.finishedAt);
  }, 120_000);
});
