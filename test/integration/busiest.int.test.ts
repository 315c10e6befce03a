import type { S3Client } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { rollupDayAllApps } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { busiestFromTotals } from "../../tools/console/api";
import { createActivityTable } from "../../tools/local/provision";
import { generateHistory } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { queuedAt } from "../support/queued";

const { s3, dynamo } = testClients();

/** The S3 client, counting the commands sent through it by name. */
function counting(client: S3Client) {
  const counts = new Map<string, number>();
  const proxy = new Proxy(client, {
    get(target, prop, receiver) {
      if (prop !== "send") return Reflect.get(target, prop, receiver);
      return (command: { constructor: { name: string } }) => {
        counts.set(command.constructor.name, (counts.get(command.constructor.name) ?? 0) + 1);
        return target.send(command as never);
      };
    },
  });
  return { client: proxy, counts };
}

describe("the console's busiest app at 1,000 apps (#31): one read a day, not a query per app", () => {
  it("ranks 1,000 apps over 3 days from the rollup ledger's totals in 3 reads", async () => {
    // Prepare: three days' passes of 1,000 apps; app-0417 sends most messages over the range.
    const bucket = await createBucket(s3, uniqueName("busiest"));
    const ledger = blobRollupLedger(s3BlobStore(s3, bucket));
    const days = ["2026-11-21", "2026-11-22", "2026-11-23"];
    const apps = Array.from({ length: 1000 }, (_, i) => `app-${String(i).padStart(4, "0")}`);
    for (const [d, day] of days.entries())
      await ledger.record({
        day,
        computedAt: 1,
        final: d < 2,
        queries: 1,
        bytesScanned: 0,
        apps: Object.fromEntries(apps.map((a) => [a, "digest"])),
        totals: Object.fromEntries(
          apps.map((a, i) => [a, [a === "app-0417" ? 50 : (i * 7 + d) % 40, 3, 60]]),
        ),
      });
    const { client, counts } = counting(s3);

    // Act
    const totals = await blobRollupLedger(s3BlobStore(client, bucket)).appTotals(days);

    // Assess
    expect(totals.size).toBe(1000);
    expect(busiestFromTotals(totals)).toBe("app-0417");
    expect(Object.fromEntries(counts)).toEqual({ GetObjectCommand: 3 });
  });

  it("is fed by every pass over every app: each app's totals are its stored figures", async () => {
    const bucket = await createBucket(s3, uniqueName("busiest-pass"));
    const day = "2026-01-02";
    const events = generateHistory({
      events: 400,
      seed: 4,
      apps: ["p-1", "p-2"],
      startAt: Date.UTC(2026, 0, 2, 9) / 1000,
    }).events;
    await archiveBatch(
      events.map((e, i) => queuedAt(e, e.at + i)),
      s3BlobStore(s3, bucket),
    );
    const table = uniqueName("activity");
    await createActivityTable(dynamo, table);
    const store = dynamoActivityStore(documentClient(dynamo), table);
    const ledger = blobRollupLedger(s3BlobStore(s3, bucket));
    await rollupDayAllApps(day, {
      engine: duckDbEngine({ s3, bucket }),
      store,
      now: () => Date.UTC(2026, 0, 2, 12),
      graceMs: 7_200_000,
      ledger,
    });
    const totals = await ledger.appTotals([day]);
    for (const app of ["p-1", "p-2"]) {
      const figures = (await store.day(app, day))?.figures as Record<string, number>;
      expect(totals.get(app)).toEqual({
        totals: [figures.messages, figures.active_users, Object.values(figures).reduce((a, b) => a + b, 0)],
        days: 1,
      });
    }
  });
});
