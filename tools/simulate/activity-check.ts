import { createHash } from "node:crypto";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { rollupDays } from "../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { commandLeaseWait } from "../analytics/engines";
import { emulatorClients } from "../local/clients";
import { localActivityTableName } from "../local/provision";
import type { LocalStackInfo } from "../local/state";
import { scanArchive } from "../ops/archive-scan";
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
    await scanArchive(s3, stack.bucket, {}, "oldest", (line) => {
      if (line.appId !== undefined && history.expected.has(line.appId))
        firstReceipt.set(line.eventId, Math.min(firstReceipt.get(line.eventId) ?? Infinity, line.receivedAt));
    });
    const receivedAt = (e: { body: string }) =>
      firstReceipt.get(createHash("sha256").update(e.body).digest("hex")) ?? Number.NaN;
    const doc = documentClient(dynamo);
    const tableName = stack.activityTable ?? localActivityTableName("local");
    const store = dynamoActivityStore(doc, tableName);
    const deps = {
      engine: duckDbEngine({ s3, bucket: stack.bucket }),
      store,
      now: Date.now,
      graceMs: 2 * 3_600_000,
      // Its figures meet the stack's own writers (its rollup timer, an erasure): under the lease, as a command.
      archiveLock: archiveLease({ doc, tableName }, Date.now, commandLeaseWait()),
    };
    // One pass a day for every app, as the schedule runs it.
    const days = new Set<string>();
    for (const appDays of expectedActivity(history.events, receivedAt).values())
      for (const day of appDays.keys()) days.add(day);
    const report = await rollupDays([...days].sort(), deps);
    if (report.failures[0]) throw report.failures[0].error;
    return await checkActivity(history, store, receivedAt);
  } finally {
    destroy();
  }
}
