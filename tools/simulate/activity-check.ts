import { createHash } from "node:crypto";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { rollupDay } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { parseRawArchiveObject, rawArchiveAppPrefix } from "../../shared/contracts/bucket-layout";
import { emulatorClients } from "../local/clients";
import { localActivityTableName } from "../local/provision";
import type { LocalStackInfo } from "../local/state";
import { checkActivity } from "./check";
import { expectedActivity } from "./expected-activity";
import type { GeneratedHistory } from "./generator";

/**
 * After a simulation against the local stack: recomputes the days of the history (DuckDB) and
 * checks the activity table against what the history implies. Each event's first receipt is
 * read from the archive (the edge stamps it; membership events fall on it).
 */
export async function rollupAndCheckActivity(
  stack: LocalStackInfo,
  history: GeneratedHistory,
): Promise<string[]> {
  const { s3, dynamo, destroy } = emulatorClients(stack.endpoints);
  try {
    const firstReceipt = new Map<string, number>();
    for (const appId of history.expected.keys())
      for (const { key } of await listObjects(s3, stack.bucket, rawArchiveAppPrefix(appId))) {
        const out = await s3.send(new GetObjectCommand({ Bucket: stack.bucket, Key: key }));
        const bytes = (await out.Body?.transformToByteArray()) ?? new Uint8Array();
        for (const line of parseRawArchiveObject(bytes, key))
          firstReceipt.set(
            line.eventId,
            Math.min(firstReceipt.get(line.eventId) ?? Infinity, line.receivedAt),
          );
      }
    const receivedAt = (e: { body: string }) =>
      firstReceipt.get(createHash("sha256").update(e.body).digest("hex")) ?? Number.NaN;
    const store = dynamoActivityStore(
      documentClient(dynamo),
      stack.activityTable ?? localActivityTableName("local"),
    );
    const deps = {
      engine: duckDbEngine({ s3, bucket: stack.bucket }),
      store,
      now: Date.now,
      graceMs: 2 * 3_600_000,
    };
    for (const [appId, days] of expectedActivity(history.events, receivedAt))
      for (const day of days.keys()) await rollupDay(appId, day, deps);
    return await checkActivity(history, store, receivedAt);
  } finally {
    destroy();
  }
}
