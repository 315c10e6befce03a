import { describe, expect, it } from "vitest";
import { sweep } from "../../shared/erasure/find-items";
import { projectBatch } from "../../shared/projector/core";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { projectionStores } from "../../shared/projector/stores";
import { projectorOnEmulators } from "../support/emulator-projector";
import { fixture } from "../support/fixtures";
import { erasureDeps } from "./forget-support";

/**
 * The erasure's filtered Scan finds a user held only by a runner-up a part keeps (#49: a part
 * keeps up to `RUNNER_UPS_KEPT`, in a list), on DynamoDB Local: the list paths it filters on are
 * ones DynamoDB accepts, and match.
 */
const env = projectorOnEmulators("sweep-runner-ups");

describe("the erasure's sweep over runner-ups (#49)", () => {
  it("finds a group whose renamer is only the second runner-up of its info", async () => {
    // Prepare: three renames without updatedAt (receipt-timed), a second apart, by u1, u2, u3:
    // u3's holds `info`, u2's and u1's are its runner-ups (u1's second).
    const tables = await env.tableSet();
    const projector = env.depsFor(projectionStores(env.dynamo, tables));
    const appId = "app-sweep";
    const renames: QueuedEvent[] = ["u1", "u2", "u3"].map((uid, i) => {
      const e = fixture("group_updated");
      Object.assign(e.data.group, { guid: "g1", name: `by ${uid}`, updatedBy: uid, owner: "owner" });
      delete e.data.group.updatedAt;
      const body = JSON.stringify({ ...e, appId });
      return {
        messageId: `m${i}`,
        eventId: `${i}`.repeat(64),
        receivedAt: 1_763_000_000_000 + i * 1000,
        trigger: e.trigger,
        appId,
        body,
      };
    });
    await projectBatch(renames, projector);
    const deps = erasureDeps({ ...env, bucket: env.bucket, tables, activityTable: "unused", now: 0 });

    // Act
    const found = await sweep(deps, "groups", appId, "u1");

    // Assess
    expect(found.map((item) => [item.name, item.updatedBy])).toEqual([["by u3", "u3"]]);
    expect(JSON.stringify(found[0]?.fallback)).toContain('"updatedBy":"u1"');
  });
});
