import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import { documentClient } from "../../../shared/adapters/dynamo-item-store";
import { listObjects } from "../../../shared/adapters/s3-listing";
import { objectText } from "../../../shared/contracts/bucket-layout";
import { testClients } from "../aws";
import type { Site } from "./world";

/*
 * The stored state of a run as the writers model's invariants read it (issue #50): every object of
 * the bucket as lines of text (NDJSON, gzipped or not; Parquet read back by DuckDB, one JSON line
 * per row), and every item of the projection tables and the activity table. Read with clients of
 * its own, outside the gate, while nothing runs.
 */

/** An object of the bucket: its key and its lines. */
export interface StoredObject {
  key: string;
  lines: string[];
}

/** A table's items (the activity table as `activity`). */
export type StoredItems = Record<string, Array<Record<string, unknown>>>;

export interface Snapshot {
  objects: StoredObject[];
  items: StoredItems;
}

/** The rows of a Parquet object as JSON lines (DuckDB, in memory). */
async function parquetLines(bytes: Uint8Array): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "wm-parquet-"));
  try {
    const path = join(dir, "o.parquet");
    writeFileSync(path, bytes);
    const { DuckDBInstance } = await import("@duckdb/node-api");
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    const reader = await connection.runAndReadAll(`SELECT * FROM read_parquet('${path}')`);
    const rows = reader.getRowObjectsJson();
    connection.closeSync();
    return rows.map((row) => JSON.stringify(row));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads the whole stored state of a run (the tables only, `objects: false`). */
export async function readSnapshot(site: Site, { objects: withObjects = true } = {}): Promise<Snapshot> {
  const { s3, dynamo, destroy } = testClients();
  try {
    const objects: StoredObject[] = [];
    for (const { key } of withObjects ? await listObjects(s3, site.bucket, "") : []) {
      const out = await s3.send(new GetObjectCommand({ Bucket: site.bucket, Key: key }));
      const bytes = (await out.Body?.transformToByteArray()) ?? new Uint8Array();
      const lines = key.endsWith(".parquet")
        ? await parquetLines(bytes)
        : objectText(bytes)
            .split("\n")
            .filter((l) => l.length > 0);
      objects.push({ key, lines });
    }
    const doc = documentClient(dynamo);
    const items: StoredItems = {};
    const tables: Array<[string, string]> = [
      ...PROJECTION_TABLE_NAMES.map((t): [string, string] => [t, site.tables[t]]),
      ["activity", site.activityTable],
    ];
    for (const [name, table] of tables) {
      items[name] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await doc.send(
          new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }),
        );
        items[name]?.push(...(page.Items ?? []));
        start = page.LastEvaluatedKey;
      } while (start);
    }
    return { objects, items };
  } finally {
    destroy();
  }
}
