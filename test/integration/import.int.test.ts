import { GetObjectCommand } from "@aws-sdk/client-s3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArchiveLockedError, acquireArchiveLease, archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3ImportRecords } from "../../shared/adapters/import-records";
import { listObjects } from "../../shared/adapters/s3-listing";
import { decodeImportedUsers, importDayKey, isImportBatchKey } from "../../shared/contracts/import-records";
import { importApi } from "../../shared/imports/import-api";
import { type FileEntry, parseImportFile } from "../../shared/imports/import-file";
import { type ImportUser, USERS_IMPORT } from "../../shared/imports/kinds";
import { type ImportLedger, runImport } from "../../shared/imports/run-import";
import { usersLedger } from "../../shared/imports/users-ledger";
import { ImportAuthError, ImportPathError } from "../../shared/platform/errors";
import { createActivityTable } from "../../tools/local/provision";
import { generateHistory } from "../../tools/simulate/generator";
import { type ImportApiDouble, startImportApi } from "../../tools/simulate/import-api";
import { simulatedApiKey, startPlatformApi } from "../../tools/simulate/platform-api";
import { createBucket, testClients, uniqueName } from "../support/aws";

/**
 * The data import (#43) against its double (`tools/simulate/import-api.ts`, the platform's import
 * path as the adapter assumes it) and the backend's records on fauxqs: batches, throttling and 5xx
 * retried, refusals named with their reason, a refused batch halved to its refused user, resumable
 * after a crash at any point, and the records folded under the archive lease.
 */
const { s3, dynamo } = testClients();
const doc = documentClient(dynamo);
const APP = "import-app";
const KEY = "sim-key-import-app";
const noSleep = async () => undefined;
let activityTable: string;
const servers: ImportApiDouble[] = [];

beforeAll(async () => {
  activityTable = uniqueName("import-activity");
  await createActivityTable(dynamo, activityTable);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function platform(options: Partial<Parameters<typeof startImportApi>[0]> = {}) {
  const server = await startImportApi({ apiKeys: new Map([[APP, KEY]]), perMinute: 100_000, ...options });
  servers.push(server);
  return server;
}

const usersFile = (n: number, from = 0): FileEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    at: `line ${i + 1}`,
    value: { uid: `u${from + i}`, name: `User ${from + i}`, createdAt: 1_700_000_000 + (from + i) * 86_400 },
  }));

async function bucketRecords() {
  const bucket = await createBucket(s3, uniqueName("imports"));
  return { bucket, records: s3ImportRecords(s3, bucket) };
}

describe("the data import API client", () => {
  it("sends batches with the apiKey header, retries 429 (Retry-After) and 5xx, and names each refusal with its reason", async () => {
    // Prepare: the 2nd request throttled, the 3rd a 503; one user refused by the platform.
    const server = await platform({
      faults: (n) => (n === 2 ? 429 : n === 3 ? 503 : undefined),
      refuse: (_, user) => (user.uid === "u7" ? "ERR_INVALID_NAME" : undefined),
    });
    const api = importApi({ url: server.importUrl(APP), apiKey: KEY, sleep: noSleep });
    const { records } = await bucketRecords();

    // Act
    const summary = await runImport({
      app: APP,
      kind: USERS_IMPORT,
      entries: usersFile(25),
      api,
      ledger: usersLedger(records),
      batchSize: 10,
      now: () => Date.parse("2026-03-02T10:00:00Z"),
    });

    // Assess
    expect(summary).toMatchObject({ read: 25, toSend: 25, imported: 24, existed: 0, unsent: 0, batches: 3 });
    expect(summary.requests).toBe(5);
    expect(summary.refused).toEqual([
      { id: "u7", at: "line 8", reason: "ERR_INVALID_NAME: refused by the simulation" },
    ]);
    expect(server.answers.get(429)).toBe(1);
    expect(server.answers.get(503)).toBe(1);
    expect([...(server.users.get(APP)?.keys() ?? [])]).toHaveLength(24);
    const recorded = await records.users(APP);
    expect([...recorded.keys()].sort()).toEqual(
      Array.from({ length: 25 }, (_, i) => `u${i}`)
        .filter((u) => u !== "u7")
        .sort(),
    );
    expect(recorded.get("u3")).toEqual({
      app: APP,
      uid: "u3",
      createdAt: 1_700_000_000 + 3 * 86_400,
      importedAt: Date.parse("2026-03-02T10:00:00Z") / 1000,
    });
  });

  it("halves a batch the platform refuses whole until the refusal is one user's, and sends the rest", async () => {
    // Prepare: the platform takes 4 users a request (an assumption of the double), the client sends 10.
    const server = await platform({ batchLimit: 4 });
    const api = importApi({ url: server.importUrl(APP), apiKey: KEY, sleep: noSleep });
    const { records } = await bucketRecords();
    const entries = usersFile(10);

    // Act
    const summary = await runImport({
      app: APP,
      kind: USERS_IMPORT,
      entries,
      api,
      ledger: usersLedger(records),
      batchSize: 10,
      now: Date.now,
    });

    // Assess: 10 → 5 + 5 (both refused) → 3 + 2 + 3 + 2, every user imported, none twice.
    expect(summary).toMatchObject({ imported: 10, refused: [] });
    expect(server.answers.get(400)).toBe(3);
    expect([...(server.received.get(APP)?.values() ?? [])].every((n) => n === 1)).toBe(true);
  });

  it("refuses a wrong key and a wrong address with a clear error, before anything is recorded", async () => {
    const server = await platform();
    const { records } = await bucketRecords();
    const attempt = (url: string, apiKey: string) =>
      runImport({
        app: APP,
        kind: USERS_IMPORT,
        entries: usersFile(3),
        api: importApi({ url, apiKey, sleep: noSleep }),
        ledger: usersLedger(records),
        batchSize: 10,
        now: Date.now,
      });
    await expect(attempt(server.importUrl(APP), "wrong")).rejects.toThrow(ImportAuthError);
    await expect(
      attempt(server.importUrl(APP).replace("/v3.0/data_import", "/v3.0/data_imports"), KEY),
    ).rejects.toThrow(ImportPathError);
    expect((await records.users(APP)).size).toBe(0);
  });

  it("stops when the platform stays unavailable, says what is unsent, and a re-run sends only that", async () => {
    // Prepare: every request from the 3rd on fails with 500 during the first run.
    let down = true;
    let n = 0;
    const server = await platform({ faults: () => (down && ++n >= 3 ? 500 : undefined) });
    const { records } = await bucketRecords();
    const run = () =>
      runImport({
        app: APP,
        kind: USERS_IMPORT,
        entries: usersFile(40),
        api: importApi({ url: server.importUrl(APP), apiKey: KEY, sleep: noSleep, maxRetries: 2 }),
        ledger: usersLedger(records),
        batchSize: 10,
        now: Date.now,
      });

    // Act
    const first = await run();
    down = false;
    const second = await run();

    // Assess
    expect(first).toMatchObject({ imported: 20, unsent: 20, batches: 2 });
    expect(first.error).toBe("POST /users: 500: SIMULATED: simulated fault after 3 attempts");
    expect(second).toMatchObject({ alreadyImported: 20, toSend: 20, imported: 20, unsent: 0 });
    expect([...(server.received.get(APP)?.values() ?? [])]).toEqual(Array(40).fill(1));
  });

  it("refuses bad entries of the file with their place, skips ids the file repeats, and a dry run sends nothing", async () => {
    // Prepare
    const text = [
      '{"uid":"a","name":"Ann","createdAt":1700000000}',
      "not json",
      '{"uid":"b"}',
      '{"uid":"c","name":"Cy","createdAt":1700000000000}',
      '{"uid":"a","name":"Ann again"}',
      '{"uid":"d","name":"Di","avatar":"https://example.com/d.png"}',
    ].join("\n");
    const server = await platform();
    const { records } = await bucketRecords();
    const options = {
      app: APP,
      kind: USERS_IMPORT,
      entries: parseImportFile(text, "users"),
      ledger: usersLedger(records),
      batchSize: 10,
      now: Date.now,
    };

    // Act
    const dry = await runImport(options);
    const real = await runImport({
      ...options,
      api: importApi({ url: server.importUrl(APP), apiKey: KEY, sleep: noSleep }),
    });

    // Assess
    expect(dry).toMatchObject({ dryRun: true, read: 6, toSend: 2, duplicates: 1, imported: 0 });
    expect(dry.invalid).toEqual([
      { at: "line 2", reason: "not JSON" },
      { id: "b", at: "line 3", reason: expect.stringContaining("name") },
      { id: "c", at: "line 4", reason: expect.stringContaining("milliseconds") },
    ]);
    expect(real).toMatchObject({ dryRun: false, toSend: 2, imported: 2 });
    // Fields beyond uid and name go to the platform as the file gives them.
    expect(server.users.get(APP)?.get("d")).toEqual({
      uid: "d",
      name: "Di",
      avatar: "https://example.com/d.png",
    });
  });
});

describe("the simulated platform's app hosts", () => {
  it("take the data import beside the user listing, with the apps' simulated keys (simulate --serve-platform)", async () => {
    // Prepare: the hosts of two simulated apps, as `simulate --serve-platform` serves them.
    const apps = ["sim-a1", "sim-a2"];
    const history = generateHistory({ events: 200, seed: 5, apps });
    const hosts = await startPlatformApi(history.expected);
    const { records } = await bucketRecords();
    try {
      const users = history.expected.get("sim-a1")?.users ?? [];

      // Act
      const summary = await runImport({
        app: "sim-a1",
        kind: USERS_IMPORT,
        entries: users.map((u, i) => ({ at: `line ${i + 1}`, value: u })),
        api: importApi({ url: hosts.importUrl("sim-a1"), apiKey: simulatedApiKey("sim-a1"), sleep: noSleep }),
        ledger: usersLedger(records),
        batchSize: 50,
        now: Date.now,
      });
      const listing = await fetch(`${hosts.baseUrl("sim-a1")}/users?perPage=1000`, {
        headers: { apiKey: simulatedApiKey("sim-a1") },
      });
      const otherKey = await importApi({
        url: hosts.importUrl("sim-a2"),
        apiKey: simulatedApiKey("sim-a1"),
        sleep: noSleep,
      })
        .send(USERS_IMPORT, [{ uid: "x", name: "X" }])
        .catch((e: unknown) => e);

      // Assess
      expect(summary).toMatchObject({ imported: users.length, refused: [] });
      expect(hosts.imports.users.get("sim-a1")?.size).toBe(users.length);
      expect(listing.status).toBe(200);
      expect(otherKey).toBeInstanceOf(ImportAuthError);
    } finally {
      await hosts.close();
    }
  });
});

describe("the import file", () => {
  it("reads NDJSON, a JSON list and the request body's own form alike", () => {
    const user = { uid: "u1", name: "Ann" };
    const values = (entries: FileEntry[]) => entries.map((e) => e.value);
    expect(values(parseImportFile(`${JSON.stringify(user)}\n\n`, "users"))).toEqual([user]);
    expect(values(parseImportFile(JSON.stringify([user]), "users"))).toEqual([user]);
    expect(values(parseImportFile(JSON.stringify({ users: { u1: user } }), "users"))).toEqual([user]);
    expect(parseImportFile(JSON.stringify({ users: { u1: user } }), "users")[0]?.at).toBe('"u1"');
    expect(parseImportFile("", "users")).toEqual([]);
  });
});

describe("resumable after a crash at any point", () => {
  it("every user is imported once and recorded once, whatever batch a crash stops at and whatever is repeated (property)", async () => {
    let app = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 29 }), { minLength: 1, maxLength: 45 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(fc.nat({ max: 3 }), fc.boolean()), { maxLength: 3 }),
        async (uids, batchSize, crashes) => {
          // Prepare: a file with repeats; crashes after the nth record (before or after the platform's answer).
          const appId = `prop-${app++}`;
          const apiKeys = new Map([[appId, KEY]]);
          const local = await startImportApi({ apiKeys, perMinute: 100_000 });
          try {
            const { records } = await bucketRecords();
            const entries: FileEntry[] = uids.map((u, i) => ({
              at: `line ${i + 1}`,
              value: { uid: `u${u}`, name: `User ${u}` },
            }));
            const ledger = usersLedger(records);
            const crashing = (afterBatches: number, recordFirst: boolean): ImportLedger<ImportUser> => {
              let batches = 0;
              return {
                recorded: ledger.recorded,
                record: async (...args) => {
                  if (batches++ === afterBatches) {
                    if (recordFirst) await ledger.record(...args);
                    throw new Error("killed");
                  }
                  await ledger.record(...args);
                },
              };
            };
            const run = (l: ImportLedger<ImportUser>) =>
              runImport({
                app: appId,
                kind: USERS_IMPORT,
                entries,
                api: importApi({ url: local.importUrl(appId), apiKey: KEY, sleep: noSleep }),
                ledger: l,
                batchSize,
                now: Date.now,
              });

            // Act: the crashing runs, then one to the end.
            for (const [after, recordFirst] of crashes)
              await run(crashing(after, recordFirst)).catch(() => undefined);
            const last = await run(ledger);

            // Assess: each distinct user created once on the platform and recorded once; a user
            // sent twice only when a crash fell between the platform's answer and the record, and
            // then taken as "existed", never refused.
            const distinct = new Set(uids.map((u) => `u${u}`));
            expect([...(local.users.get(appId)?.keys() ?? [])].sort()).toEqual([...distinct].sort());
            expect([...(await records.users(appId)).keys()].sort()).toEqual([...distinct].sort());
            expect(last.refused).toEqual([]);
            expect(last.unsent).toBe(0);
            const twice = [...(local.received.get(appId)?.values() ?? [])].filter((n) => n > 1).length;
            const unrecordedCrashes = crashes.filter(([, recordFirst]) => !recordFirst).length;
            expect(twice).toBeLessThanOrEqual(unrecordedCrashes * batchSize);
          } finally {
            await local.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  }, 180_000);
});

describe("the import records", () => {
  it("are folded into one object a day under the archive lease, read the same before and after, and a held lease defers the fold", async () => {
    // Prepare: two apps' batches on two days.
    const { bucket, records } = await bucketRecords();
    const day1 = Date.parse("2026-03-01T12:00:00Z") / 1000;
    const day2 = Date.parse("2026-03-02T12:00:00Z") / 1000;
    await records.addBatch("a1", [
      { app: "a1", uid: "x", importedAt: day1 },
      { app: "a1", uid: "y", createdAt: 1_600_000_000, importedAt: day1 },
    ]);
    await records.addBatch("a2", [{ app: "a2", uid: "x", importedAt: day1 }]);
    await records.addBatch("a1", [{ app: "a1", uid: "z", importedAt: day2, existed: true }]);
    const before = await records.users("a1");
    const lease = archiveLease({ doc, tableName: activityTable }, Date.now);

    // Act: a fold while another rewrite holds the lease, then one after it lapsed.
    await acquireArchiveLease({ doc, tableName: activityTable }, "erasure e1", Date.now());
    await expect(records.fold(lease, Date.now)).rejects.toThrow(ArchiveLockedError);
    const later = () => Date.now() + 16 * 60_000;
    const folded = await records.fold(archiveLease({ doc, tableName: activityTable }, later), later);

    // Assess
    expect(folded).toBe(3);
    const keys = (await listObjects(s3, bucket, "imports/")).map((o) => o.key);
    expect(keys.sort()).toEqual([importDayKey("users", "2026-03-01"), importDayKey("users", "2026-03-02")]);
    expect(keys.some(isImportBatchKey)).toBe(false);
    expect(await records.users("a1")).toEqual(before);
    expect([...(await records.users("a2")).keys()]).toEqual(["x"]);
    const object = await s3.send(
      new GetObjectCommand({ Bucket: bucket, Key: importDayKey("users", "2026-03-01") }),
    );
    const lines = decodeImportedUsers(
      await (object.Body?.transformToByteArray() ?? Promise.resolve(new Uint8Array())),
      "day",
    );
    expect(lines.map((l) => `${l.app}/${l.uid}`)).toEqual(["a1/x", "a1/y", "a2/x"]);
    // Folding again with nothing to fold changes nothing.
    expect(await records.fold(archiveLease({ doc, tableName: activityTable }, later), later)).toBe(0);
  });
});
