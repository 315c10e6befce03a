import { describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3ImportRecords } from "../../shared/adapters/import-records";
import { forget } from "../../shared/erasure/forget";
import { createActivityTable } from "../../tools/local/provision";
import { uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { erasureDeps, U1, U2 } from "./forget-support";

/**
 * `forget` covers imported users (#43 item 4): the backend's import records (`imports/users/`,
 * folded or not) hold the pseudonym where they held the user, as the day sets do, so a figure
 * counting imported users stays exact; a whole app's erasure removes its lines. DynamoDB Local,
 * fauxqs, DuckDB.
 */
const env = projectorOnEmulators("import-forget");
const NOW = Date.UTC(2026, 5, 1);
const DAY1 = Date.UTC(2026, 4, 2, 12) / 1000;
const DAY2 = Date.UTC(2026, 4, 3, 12) / 1000;

async function site() {
  const tables = await env.tableSet();
  const activityTable = uniqueName("activity");
  await createActivityTable(env.dynamo, activityTable);
  const deps = erasureDeps({ ...env, bucket: env.bucket, tables, activityTable, now: NOW });
  const lease = archiveLease({ doc: documentClient(env.dynamo), tableName: activityTable }, () => NOW);
  return { deps, lease };
}

describe("forget and the import records", () => {
  it("gives the erased user's pseudonym in the import records, folded or not, and leaves every other line as it was", async () => {
    // Prepare: app A imported U1 and U2 on day 1 (folded) and U1 again on day 2 under another app B;
    // on day 2 A's batch with U1 is not folded yet.
    const { deps, lease } = await site();
    const records = s3ImportRecords(env.s3, env.bucket);
    const [a, b] = [uniqueName("imp-a"), uniqueName("imp-b")];
    await records.addBatch(a, [
      { app: a, uid: U1, createdAt: 1_600_000_000, importedAt: DAY1 },
      { app: a, uid: U2, importedAt: DAY1 },
    ]);
    await records.fold(lease, () => NOW);
    await records.addBatch(b, [{ app: b, uid: U1, importedAt: DAY2 }]);
    await records.addBatch(a, [{ app: a, uid: `${U1}-other`, importedAt: DAY2 }]);

    // Act
    const report = await forget(deps, { appId: a, uid: U1, requestedBy: "test" });

    // Assess
    const pseudonym = report.pseudonym ?? "";
    expect(pseudonym).toMatch(/^erased-/);
    const ofA = await records.users(a);
    expect([...ofA.keys()].sort()).toEqual([U2, `${U1}-other`, pseudonym].sort());
    expect(ofA.get(pseudonym)).toEqual({
      app: a,
      uid: pseudonym,
      createdAt: 1_600_000_000,
      importedAt: DAY1,
    });
    expect(JSON.stringify([...ofA.values()])).not.toContain(`"${U1}"`);
    // Another app's import of a user with the same uid is another person's: untouched.
    expect([...(await records.users(b)).keys()]).toEqual([U1]);
  });

  it("removes a whole app's import records, and keeps the other apps'", async () => {
    const { deps } = await site();
    const records = s3ImportRecords(env.s3, env.bucket);
    const [a, b] = [uniqueName("imp-a"), uniqueName("imp-b")];
    await records.addBatch(a, [{ app: a, uid: U1, importedAt: DAY1 }]);
    await records.addBatch(b, [{ app: b, uid: U2, importedAt: DAY1 }]);

    await forget(deps, { appId: a, requestedBy: "test" });

    expect((await records.users(a)).size).toBe(0);
    expect([...(await records.users(b)).keys()]).toEqual([U2]);
  });
});
