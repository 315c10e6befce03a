import { describe, expect, it } from "vitest";
import { forget } from "../../shared/erasure/forget";
import { projectBatch } from "../../shared/projector/core";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable } from "../../tools/local/provision";
import { listLevel } from "../../tools/ops/archive-scan";
import { recentEvents } from "../../tools/ops/recent";
import { uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { delivery, entity, erasureDeps, groupJoinedByU1, U1, U2, U3 } from "./forget-support";

/**
 * `events` and the console's recent events after an erasure (#50, "also found"): they took a day's
 * objects by when each was last written, so the old objects an erasure rewrote came first and
 * filled the list, and the newest events were missing. They select by receipt now. DynamoDB
 * Local, fauxqs (S3), DuckDB.
 */
const env = projectorOnEmulators("recent-events");

describe("the most recent events, after an erasure rewrote older objects", () => {
  it("are the newest received, not those of the objects written last", async () => {
    // Prepare: U1's group, presence and message at 09:00, then three messages of others at 10:00;
    // U1 erased, which rewrites the 09:00 object.
    const tables = await env.tableSet();
    const activityTable = uniqueName("activity");
    await createActivityTable(env.dynamo, activityTable);
    const appId = uniqueName("recent");
    const projector = env.depsFor(projectionStores(env.dynamo, tables));
    // More of the app's lines in the 09:00 object than the list holds: read first, they filled it.
    const nine = Date.UTC(2026, 5, 1, 9);
    const early = [
      ...groupJoinedByU1(appId, "g", nine),
      delivery("user_connection_status_changed", appId, nine + 5000, (b) => {
        b.data.timestamp = nine + 5000;
      }),
      delivery("message_sent", appId, nine + 6000),
    ];
    const late = [1, 2, 3].map((n) =>
      delivery("message_sent", appId, Date.UTC(2026, 5, 1, 10, n), (b) => {
        Object.assign(b.data.message, { id: `late-${n}`, sender: U2, receiver: U3 });
        b.data.message.conversationId = `${U2}_user_${U3}`;
        b.data.message.data.entities = {
          sender: { entity: entity(U2, "George Alan"), entityType: "user" },
          receiver: { entity: entity(U3, "Carol Ray"), entityType: "user" },
        };
      }),
    );
    for (const batch of [early, late]) {
      await archiveBatch(batch, projector.dataStore);
      await projectBatch(batch, projector);
    }
    const site = { ...env, bucket: env.bucket, tables, activityTable, now: Date.UTC(2026, 5, 2) };
    const report = await forget(erasureDeps(site), { appId, uid: U1, requestedBy: "test" });
    const hour = async (hh: string) =>
      (await listLevel(env.s3, env.bucket, `raw/date=2026-06-01/hour=${hh}/`)).objects.map((o) => o.modified);
    const [rewritten, newest] = [await hour("09"), await hour("10")];

    // Act
    const recent = await recentEvents(env.s3, env.bucket, projector.stores, { appId, limit: 3 });

    // Assess: the 09:00 object is the one written last, yet the list is the 10:00 events.
    expect(report.plan.objects.filter((k) => k.startsWith("raw/"))).toEqual([
      expect.stringMatching(/^raw\/date=2026-06-01\/hour=09\//),
    ]);
    expect(Math.min(...rewritten)).toBeGreaterThan(Math.max(...newest));
    expect(recent.map((e) => e.eventId)).toEqual(late.map((e) => e.eventId).reverse());
  }, 120_000);
});
