import { describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { rollupDay } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { parseRawArchiveObject, utcDay } from "../../shared/contracts/bucket-layout";
import { forget } from "../../shared/erasure/forget";
import { projectBatch } from "../../shared/projector/core";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable } from "../../tools/local/provision";
import { rederiveArchive } from "../../tools/ops/archive-repair";
import { uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { delivery, erasureDeps, U1, U2 } from "./forget-support";

/**
 * `rederive` after `forget` (#50, defect 1), on DynamoDB Local, fauxqs and DuckDB. The redaction
 * stripped fields the schemas require (a call's `data.action`, a reaction's ids, an edit's
 * `data.action`), so `rederive` read three redacted lines as other facts (audio calls 1→0,
 * reactions 1→0, active users 2→1) and rewrote them without their erasure mark, which a later
 * `replay` then applied. Now it changes no line of a redacted day, and the figures stay.
 */
const env = projectorOnEmulators("forget-rederive");
const NOW = Date.UTC(2026, 3, 10);
const AT = Date.UTC(2026, 3, 1, 10);

/** U1's call, reaction and edit, and a message each of U1 and U2, all on one day. */
function history(appId: string) {
  const s = AT / 1000;
  return [
    delivery("message_sent", appId, AT, (b) => {
      Object.assign(b.data.message, { id: "m1", sentAt: s, updatedAt: s });
    }),
    delivery("message_sent", appId, AT + 1000, (b) => {
      Object.assign(b.data.message, { id: "m2", sender: U2, receiver: U1, sentAt: s + 1, updatedAt: s + 1 });
      b.data.message.conversationId = `${U1}_user_${U2}`;
      b.data.message.data.entities.sender.entity.uid = U2;
      b.data.message.data.entities.receiver.entity.uid = U1;
    }),
    delivery("call_initiated", appId, AT + 2000, (b) => {
      Object.assign(b.data.call, { sentAt: s + 2, updatedAt: s + 2 });
      Object.assign(b.data.call.data.entities.on.entity, { initiatedAt: s + 2, joinedAt: s + 2 });
    }),
    delivery("message_reaction_added", appId, AT + 3000, (b) => {
      Object.assign(b.data.reaction, { messageId: "m2", reactedAt: s + 3 });
    }),
    delivery("message_edited", appId, AT + 4000, (b) => {
      Object.assign(b.data.message, { sentAt: s + 4, updatedAt: s + 4 });
      Object.assign(b.data.message.data.entities.on.entity, { id: "m1", editedAt: s + 4, updatedAt: s + 4 });
    }),
  ];
}

/** Every raw line of the app, by object key, as text. */
async function appLines(appId: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const { key } of await listObjects(env.s3, env.bucket, "raw/")) {
    const archive = s3BlobStore(env.s3, env.bucket);
    const lines = parseRawArchiveObject(await archive.getBytes(key), key).filter((l) => l.appId === appId);
    if (lines.length)
      out.set(
        key,
        lines.map((l) => JSON.stringify(l)),
      );
  }
  return out;
}

describe("forget, then rederive (#50, defect 1)", () => {
  it("rederive changes no line of a redacted day, keeps every erasure mark, and the figures stay the post-erasure figures", async () => {
    // Prepare: the day archived, projected and rolled up; U1 erased (the erasure recomputes the day).
    const appId = uniqueName("rederive");
    const tables = await env.tableSet();
    const activityTable = uniqueName("activity");
    await createActivityTable(env.dynamo, activityTable);
    const deliveries = history(appId);
    const projector = env.depsFor(projectionStores(env.dynamo, tables));
    await archiveBatch(deliveries, projector.dataStore);
    await projectBatch(deliveries, projector);
    const deps = erasureDeps({ ...env, bucket: env.bucket, tables, activityTable, now: NOW });
    const day = utcDay(AT);
    await rollupDay(appId, day, deps.rollup);
    const store = dynamoActivityStore(documentClient(env.dynamo), activityTable);
    const before = (await store.day(appId, day))?.figures;
    const report = await forget(deps, { appId, uid: U1, requestedBy: "test" });
    const erased = await appLines(appId);
    const afterForget = (await store.day(appId, day))?.figures;
    const rewriter = {
      lease: archiveLease({ doc: documentClient(env.dynamo), tableName: activityTable }, () => NOW),
      now: () => NOW,
    };

    // Act
    const rederived = await rederiveArchive(env.s3, s3BlobStore(env.s3, env.bucket), { appId }, rewriter);
    await rollupDay(appId, day, deps.rollup);

    // Assess: the erasure kept every figure; rederive read every redacted line as the same fact.
    expect(before).toMatchObject({ calls_audio: 1, reactions_added: 1 });
    expect(before?.active_users).toBeGreaterThan(1);
    expect(afterForget).toEqual(before);
    expect(report.counts.linesRedacted).toBe(5);
    expect({ changed: rederived.changed, byTrigger: rederived.byTrigger }).toEqual({
      changed: 0,
      byTrigger: {},
    });
    const marks = [...erased.values()].flat().filter((l) => JSON.parse(l).erasure === report.erasureId);
    expect(marks).toHaveLength(5);
    expect(await appLines(appId)).toEqual(erased);
    expect((await store.day(appId, day))?.figures).toEqual(afterForget);
  }, 120_000);
});
