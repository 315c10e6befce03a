import { createHash } from "node:crypto";
import { GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3ImportRecords } from "../../shared/adapters/import-records";
import { listObjects } from "../../shared/adapters/s3-listing";
import {
  decodeImportedUsers,
  encodeImportedUsers,
  importBatchKey,
} from "../../shared/contracts/import-records";
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

describe("an import batch's key says nothing of who is in it (#50, defect 9)", () => {
  /** The key an import batch had before #50: the digest of its app and its sorted uids. */
  const digestKey = (app: string, uids: string[], day: string) =>
    importBatchKey(
      "users",
      day,
      createHash("sha256")
        .update(JSON.stringify([app, ...[...uids].sort()]))
        .digest("hex")
        .slice(0, 32),
    );

  it("a batch is recorded under a random key: the same users twice, two keys, neither their digest", async () => {
    // Prepare
    const records = s3ImportRecords(env.s3, env.bucket);
    const app = uniqueName("imp-key");
    const users = [U1, U2].map((uid) => ({ app, uid, importedAt: DAY1 }));

    // Act
    const first = await records.addBatch(app, users);
    const second = await records.addBatch(app, users);

    // Assess: keys of the batch layout, random; read as one user each.
    expect(first).toMatch(/^imports\/users\/date=2026-05-02\/batch-[0-9a-f]{32}\.ndjson\.gz$/);
    expect(second).not.toBe(first);
    expect([first, second]).not.toContain(digestKey(app, [U1, U2], "2026-05-02"));
    expect([...(await records.users(app)).keys()].sort()).toEqual([U1, U2]);
  });

  it("forget rewrites a batch kept under its old digest key (still read as any other) to a random key: no key left from which a candidate uid can be tried", async () => {
    // Prepare: a batch written before #50, under the digest of its app and uids.
    const { deps } = await site();
    const records = s3ImportRecords(env.s3, env.bucket);
    const app = uniqueName("imp-old");
    const old = digestKey(app, [U1, U2], "2026-05-02");
    await env.s3.send(
      new PutObjectCommand({
        Bucket: env.bucket,
        Key: old,
        Body: encodeImportedUsers([U1, U2].map((uid) => ({ app, uid, importedAt: DAY1 }))),
      }),
    );
    const before = [...(await records.users(app)).keys()].sort();

    // Act
    const report = await forget(deps, { appId: app, uid: U1, requestedBy: "test" });

    // Assess: the old key read before, gone after; the users read from a random key; no key of
    // the prefix is the digest of the app with U1 and the others.
    expect(before).toEqual([U1, U2]);
    const keys = (await listObjects(env.s3, env.bucket, "imports/users/date=2026-05-02/")).map((o) => o.key);
    expect(keys).not.toContain(old);
    const mine = [];
    for (const key of keys) {
      const out = await env.s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: key }));
      const lines = decodeImportedUsers((await out.Body?.transformToByteArray()) ?? new Uint8Array(), key);
      if (lines.some((l) => l.app === app)) mine.push({ key, uids: lines.map((l) => l.uid).sort() });
    }
    expect(mine).toEqual([
      { key: expect.stringMatching(/batch-[0-9a-f]{32}\.ndjson\.gz$/), uids: [U2, report.pseudonym].sort() },
    ]);
    expect(mine[0]?.key).not.toBe(digestKey(app, [U1, U2], "2026-05-02"));
    expect([...(await records.users(app)).keys()].sort()).toEqual([U2, report.pseudonym].sort());
  });
});
