import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { beforeAll, describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { compactManifestKey } from "../../shared/analytics/compaction";
import { duckDbCompactor } from "../../shared/analytics/engines/duckdb-compactor";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { dayActivities } from "../../shared/analytics/rollup";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { expectedActivity } from "../../tools/simulate/expected-activity";
import { type GeneratedEvent, generateHistory, zipfWeights } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { queuedAt } from "../support/queued";

const { s3 } = testClients();
const DAY = "2026-01-02";
const START = Date.UTC(2026, 0, 2, 0, 10) / 1000;

/** The S3 client with its manifest PUTs refused: a compaction that dies before its last write (a fault the emulator cannot produce). */
function failingManifests(client: S3Client): S3Client {
  return new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== "send") return Reflect.get(target, prop, receiver);
      return (command: unknown) => {
        if (command instanceof PutObjectCommand && String(command.input.Key).endsWith("manifest.json"))
          return Promise.reject(new Error("injected: the function ended before the manifest"));
        return target.send(command as never);
      };
    },
  });
}

describe("closed days compacted to Parquet", () => {
  let bucket: string;
  const apps = ["c-big", "c-mid", "c-ü/x"];
  let history: GeneratedEvent[];
  const receipt = (i: number, e: GeneratedEvent) => e.at + 300 + i;

  beforeAll(async () => {
    bucket = await createBucket(s3, uniqueName("compact"));
    history = generateHistory({
      events: 1500,
      seed: 5,
      apps,
      appWeights: zipfWeights(apps.length),
      startAt: START,
    }).events.filter((e) => e.at < Date.UTC(2026, 0, 2, 23));
    const store = s3BlobStore(s3, bucket);
    const late = history.slice(-40);
    const early = history.slice(0, -40);
    for (let i = 0; i < early.length; i += 50)
      await archiveBatch(
        early.slice(i, i + 50).map((e, j) => queuedAt(e, receipt(i + j, e))),
        store,
      );
    // Kept for "a line archived after its day was compacted".
    (globalThis as { lateBatch?: QueuedEvent[] }).lateBatch = late.map((e, j) =>
      queuedAt(e, receipt(early.length + j, e)),
    );
  });

  it("reads the same figures from Parquet, counts a line archived after compaction, and survives a crash mid-way", async () => {
    // Prepare
    const engine = duckDbEngine({ s3, bucket });
    const before = await dayActivities(engine, DAY);
    const crashed = duckDbCompactor({ s3: failingManifests(s3), bucket });

    // Act: a compaction that dies before its manifest, then one that completes, then again.
    await expect(crashed.compactDay(DAY)).rejects.toThrow(/injected/);
    const afterCrash = await dayActivities(engine, DAY);
    const first = await duckDbCompactor({ s3, bucket }).compactDay(DAY);
    const again = await duckDbCompactor({ s3, bucket }).compactDay(DAY);
    const compacted = await dayActivities(engine, DAY);
    const lateBatch = (globalThis as { lateBatch?: QueuedEvent[] }).lateBatch ?? [];
    await archiveBatch(lateBatch, s3BlobStore(s3, bucket));
    const withLate = await dayActivities(engine, DAY);
    const recompacted = await duckDbCompactor({ s3, bucket }).compactDay(DAY);
    const afterRecompaction = await dayActivities(engine, DAY);

    // Assess
    expect(afterCrash.activities).toEqual(before.activities);
    expect(again.parquet).toEqual(first.parquet);
    expect(again.sources).toEqual(first.sources);
    expect(first.rows).toBeGreaterThan(1000);
    expect(compacted.activities).toEqual(before.activities);
    const receipts = new Map(history.map((e, i) => [e.body, receipt(i, e)]));
    const want = expectedActivity(history, (e) => receipts.get(e.body) ?? 0);
    for (const app of apps) {
      expect(withLate.activities.get(app)?.figures).toEqual(want.get(app)?.get(DAY)?.figures);
      expect(afterRecompaction.activities.get(app)).toEqual(withLate.activities.get(app));
    }
    expect(recompacted.sources.length).toBe(first.sources.length + 1);
    const parquet = (await listObjects(s3, bucket, "compact/")).filter((o) => o.key.endsWith(".parquet"));
    expect(parquet.map((o) => o.key)).toEqual(recompacted.parquet);
    expect((await listObjects(s3, bucket, compactManifestKey(DAY))).length).toBe(1);
  });

  it("gives ad-hoc SQL one view: Parquet for a compacted day, NDJSON beside it, one app's lines with --app", async () => {
    const engine = duckDbEngine({ s3, bucket });
    const count = async (scope: { app?: string }) =>
      (
        await engine.query(
          `SELECT count(*) AS n FROM archive_events WHERE "date" = '${DAY}'`,
          {},
          { from: DAY, to: DAY, ...scope },
        )
      ).rows[0]?.n;
    const all = Number(await count({}));
    const one = Number(await count({ app: "c-ü/x" }));
    expect(all).toBe(history.length);
    expect(one).toBe(history.filter((e) => e.appId === "c-ü/x").length);
  });
});
