import { PutObjectCommand } from "@aws-sdk/client-s3";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { appKey } from "@webhook-backend/stream/projections/keys";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { parseRawArchiveObject } from "../../shared/contracts/bucket-layout";
import { forget } from "../../shared/erasure/forget";
import { mentionsUid } from "../../shared/erasure/redact";
import { projectBatch } from "../../shared/projector/core";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable } from "../../tools/local/provision";
import { uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { appItems, delivery, entity, erasureDeps, groupJoinedByU1, U2, U3 } from "./forget-support";

/**
 * Whom an erasure takes for the user (#50, defects 2 and 7), on DynamoDB Local, fauxqs and DuckDB:
 * a uid that prefixes another's (`john`, `john_doe`) is matched only whole, or as a side of a
 * conversation id; a name is the user's only in a session their uid ties to them.
 */
const env = projectorOnEmulators("forget-identities");
const NOW = Date.UTC(2026, 4, 10);

/** Tables, an activity table, the erasure's dependencies and a projector over them. */
async function site() {
  const tables = await env.tableSet();
  const activityTable = uniqueName("activity");
  await createActivityTable(env.dynamo, activityTable);
  return {
    tables,
    deps: erasureDeps({ ...env, bucket: env.bucket, tables, activityTable, now: NOW }),
    projector: env.depsFor(projectionStores(env.dynamo, tables)),
  };
}

/** Every archive line of the app, as text, by event id. */
async function appLines(appId: string): Promise<Map<string, string>> {
  const archive = s3BlobStore(env.s3, env.bucket);
  const out = new Map<string, string>();
  for (const { key } of await listObjects(env.s3, env.bucket, "raw/"))
    for (const line of parseRawArchiveObject(await archive.getBytes(key), key))
      if (line.appId === appId) out.set(line.eventId, JSON.stringify(line));
  return out;
}

/** A message from `sender` to `receiver` in their conversation, mentioning the receiver. */
function message(appId: string, at: number, sender: string, receiver: string): QueuedEvent {
  return delivery("message_sent", appId, at, (b) => {
    Object.assign(b.data.message, { id: `m-${at}`, sender, receiver, sentAt: at / 1000 });
    b.data.message.conversationId = `${sender}_user_${receiver}`;
    b.data.message.data.text = `hi <@uid:${receiver}>`;
    b.data.message.data.entities.sender.entity = entity(sender, `${sender} name`);
    b.data.message.data.entities.receiver.entity = entity(receiver, `${receiver} name`);
  });
}

describe("a uid that prefixes another's (#50, defect 2)", () => {
  it("after forget john, forget john_doe finds john_doe whole (their lines, their presence and membership) and erases them", async () => {
    // Prepare: both in one group, a message between them, each online.
    const { tables, deps, projector } = await site();
    const appId = uniqueName("prefix");
    const at = Date.UTC(2026, 4, 1, 9);
    const [created] = groupJoinedByU1(appId, "g", at);
    const joined = (uid: string, t: number) =>
      delivery("group_member_joined", appId, t, (b) => {
        b.data.group = { ...b.data.group, guid: "g", conversationId: "group_g", owner: U3 };
        b.data.members = { [uid]: entity(uid, `${uid} name`) };
      });
    const online = (uid: string, t: number) =>
      delivery("user_connection_status_changed", appId, t, (b) => {
        Object.assign(b.data, { timestamp: t });
        b.data.user = entity(uid, `${uid} name`);
      });
    const deliveries = [
      created as QueuedEvent,
      joined("john", at + 1000),
      joined("john_doe", at + 2000),
      message(appId, at + 3000, "john", "john_doe"),
      message(appId, at + 4000, "john_doe", U2),
      online("john", at + 5000),
      online("john_doe", at + 6000),
    ];
    await archiveBatch(deliveries, projector.dataStore);
    await projectBatch(deliveries, projector);

    // Act
    const first = await forget(deps, { appId, uid: "john", requestedBy: "test" });
    const afterFirst = await appLines(appId);
    const second = await forget(deps, { appId, uid: "john_doe", requestedBy: "test" });

    // Assess: the first left john_doe whole; the second found their three lines of their own, the
    // one they share with john, and their items, and left neither uid anywhere.
    expect(first.counts.linesRedacted).toBe(3);
    expect([...afterFirst.values()].filter((l) => mentionsUid(l, "john_doe"))).toHaveLength(4);
    expect([...afterFirst.values()].some((l) => l.includes(`${first.pseudonym}_doe`))).toBe(false);
    expect(second.counts.linesRedacted).toBe(4);
    expect(second.counts.itemsDeleted).toBe(2);
    const lines = [...(await appLines(appId)).values()];
    expect(lines.filter((l) => mentionsUid(l, "john") || mentionsUid(l, "john_doe"))).toEqual([]);
    expect(lines.some((l) => l.includes(`${first.pseudonym}_user_${second.pseudonym}`))).toBe(true);
    const items = JSON.stringify(await appItems(env.dynamo, tables, appId));
    expect(mentionsUid(items, "john") || mentionsUid(items, "john_doe")).toBe(false);
  }, 120_000);
});

describe("a namesake's call (#50, defect 7)", () => {
  it("renames the occupant bearing the user's name only in a session their uid ties to them: another pair's call and a meeting keep the name, their items and recordings", async () => {
    // Prepare: U1 (Andrew Joseph) calls U2 and joins; U2 calls U3, and a namesake Andrew Joseph
    // joins that call; a meeting an Andrew Joseph joins; U1 is known by name (their message).
    const { tables, deps, projector } = await site();
    const appId = uniqueName("namesake");
    const at = Date.UTC(2026, 4, 2, 9);
    const call = (sessionId: string, from: string, to: string, t: number) =>
      delivery("call_initiated", appId, t, (b) => {
        Object.assign(b.data.call, { id: `c-${t}`, sender: from, receiver: to, sentAt: t / 1000 });
        b.data.call.conversationId = `${from}_user_${to}`;
        b.data.call.data.entities.by.entity = entity(
          from,
          from === "cometchat-uid-1" ? "Andrew Joseph" : "Other",
        );
        b.data.call.data.entities.for.entity = entity(to, "Someone");
        Object.assign(b.data.call.data.entities.on.entity, {
          sessionid: sessionId,
          sender: from,
          receiver: to,
          conversationId: `${from}_user_${to}`,
        });
        b.data.call.data.entities.on.entity.data = {};
      });
    const occupant = (trigger: string, sessionId: string, t: number) =>
      delivery(trigger, appId, t, (b) => {
        b.data.occupant = { joined_at: t / 1000, audio_call: "true", name: "Andrew Joseph" };
        b.data.sessionId = sessionId;
      });
    const deliveries = [
      message(appId, at, "cometchat-uid-1", U2),
      call("theirs", "cometchat-uid-1", U2, at + 1000),
      occupant("call_participant_joined", "theirs", at + 2000),
      call("others", U2, U3, at + 3000),
      occupant("call_participant_joined", "others", at + 4000),
      occupant("meeting_participant_joined", "meeting", at + 5000),
    ];
    await archiveBatch(deliveries, projector.dataStore);
    await projectBatch(deliveries, projector);
    const recording = `recordings/${appId}/others/1.mp4`;
    await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: recording, Body: "mp4" }));
    await documentClient(env.dynamo).send(
      new UpdateCommand({
        TableName: tables.sessions,
        Key: { pk: appKey(appId, "others") },
        UpdateExpression: "SET recordings = :r",
        ExpressionAttributeValues: { ":r": { "1": { key: recording, status: "archived" } } },
      }),
    );
    const before = await appLines(appId);
    const itemsBefore = await appItems(env.dynamo, tables, appId);

    // Act
    const report = await forget(deps, { appId, uid: "cometchat-uid-1", requestedBy: "test" });

    // Assess: their call's occupant renamed; the other pair's call and the meeting as they were.
    const after = await appLines(appId);
    const [, , theirs, , others, meeting] = deliveries.map((d) => d.eventId);
    const occupantOf = (line: string | undefined) =>
      JSON.parse(JSON.parse(line ?? "{}").body).data.occupant.name;
    expect(occupantOf(after.get(theirs ?? ""))).toBe(report.pseudonym);
    expect(after.get(others ?? "")).toBe(before.get(others ?? ""));
    expect(after.get(meeting ?? "")).toBe(before.get(meeting ?? ""));
    expect(report.plan.sessions).toEqual(["theirs"]);
    const sessions = (await appItems(env.dynamo, tables, appId)).sessions ?? [];
    const item = (id: string, of: typeof sessions) => of.find((s) => s.sessionId === id);
    expect(item("others", sessions)).toEqual(item("others", itemsBefore.sessions ?? []));
    expect(JSON.stringify(item("theirs", sessions))).not.toContain("Andrew Joseph");
    expect(report.plan.recordings).toEqual([]);
    expect((await listObjects(env.s3, env.bucket, recording)).map((o) => o.key)).toEqual([recording]);
  }, 120_000);
});
