/**
 * bench:activity's simulated day (#31, #59): one app's or many apps' events delivered as the
 * platform would (received 0.5 s after the event; 5% delivered again 10 or 40 s later, as a
 * platform retry; 1% received 1 to 120 minutes late), archived as the projector archives them at
 * a given batch size, and the rollup's engine over the files written.
 */
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import { bindNamed, duckDbArchiveViews } from "../shared/analytics/dialect";
import type { DayRange, SqlEngine } from "../shared/analytics/engines/sql-engine";
import { dayStart } from "../shared/analytics/rollup";
import { dayOfKey } from "../shared/contracts/bucket-layout";
import { S3_PREFIX } from "../shared/platform/constants";
import type { BlobStore } from "../shared/ports/blob-store";
import type { QueuedEvent } from "../shared/projector/queued-event";
import { archiveBatch } from "../shared/projector/raw-archive";
import { generateHistory, zipfWeights } from "../tools/simulate/generator";
import type { Written } from "./activity-reads";

/** ~1 event a second: enough to cover the day and 10 minutes on either side. */
export const EVENTS = Number(process.env.BENCH_EVENTS ?? 86_000);
export const DAY = "2026-03-02";
/** How the platform delivers (assumed): retries 10 and 40 s after the first delivery, some events late. */
export const DELIVERY = { retryShare: 0.05, lateShare: 0.01, maxLateMinutes: 120 };

/** A number in [0, 1) from a string: the same deliveries on every run. */
const unit = (text: string) => createHash("sha256").update(text).digest().readUInt32BE(0) / 2 ** 32;

/**
 * The simulated day of `apps` (Zipf-like weights when several) delivered as the platform would
 * and archived in batches of 100 under `dir`, as the projector archives them.
 */
export async function simulateDay(apps: string[], dir: string) {
  const { history, deliveries } = simulateDeliveries(apps);
  return { history, deliveries, ...(await archiveDeliveries(deliveries, { batch: 100, dir })) };
}

/** The simulated day of `apps`, delivered as the platform would: in receipt order. */
export function simulateDeliveries(apps: string[]) {
  const start = dayStart(DAY);
  const history = generateHistory({
    events: EVENTS,
    seed: 7,
    apps,
    ...(apps.length > 1 ? { appWeights: zipfWeights(apps.length) } : {}),
    startAt: (start - 600_000) / 1000,
  });
  const deliveries: QueuedEvent[] = [];
  for (const e of history.events) {
    const eventId = createHash("sha256").update(e.body).digest("hex");
    const late = unit(`late ${eventId}`) < DELIVERY.lateShare;
    const receivedAt =
      e.at + 500 + (late ? Math.ceil(unit(`by ${eventId}`) * DELIVERY.maxLateMinutes * 60_000) : 0);
    const delivery = {
      messageId: eventId,
      eventId,
      receivedAt,
      trigger: e.trigger,
      appId: e.appId,
      body: e.body,
    };
    deliveries.push(delivery);
    if (unit(`retry ${eventId}`) < DELIVERY.retryShare)
      deliveries.push({
        ...delivery,
        messageId: `${eventId}-retry`,
        receivedAt: receivedAt + (unit(`when ${eventId}`) < 0.5 ? 10_000 : 40_000),
      });
  }
  deliveries.sort((a, b) => a.receivedAt - b.receivedAt);
  return { history, deliveries };
}

/**
 * `deliveries` archived as the projector archives them, in batches of `batch` in receipt order:
 * written under `dir` when given, else only counted (sizes, keys, times).
 */
export async function archiveDeliveries(
  deliveries: readonly QueuedEvent[],
  options: { batch: number; dir?: string },
) {
  const { dir } = options;
  /** Every object written: its path, table, day, size and when its batch was archived. */
  const objects: Written[] = [];
  let batchAt = 0;
  const store: BlobStore = {
    bucket: "bench",
    async put(key, body) {
      const path = dir ? join(dir, key) : key;
      if (dir) {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, body);
      }
      const bytes = typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
      const table = key.startsWith(S3_PREFIX.edge) ? "edge" : "raw";
      const hour = /\/hour=(\d\d)\//.exec(key)?.[1] ?? "";
      objects.push({ path, key, table, day: dayOfKey(key) ?? "", hour, bytes, at: batchAt });
      return { bucket: "bench", key, size: bytes };
    },
    getText: async () => "",
    getBytes: async () => new Uint8Array(),
    getBytesIfPresent: async () => undefined,
  };
  let batches = 0;
  for (let i = 0; i < deliveries.length; i += options.batch) {
    const batch = deliveries.slice(i, i + options.batch);
    batchAt = Math.max(...batch.map((d) => d.receivedAt));
    await archiveBatch(batch, store);
    batches++;
  }
  return { objects, batches };
}

/**
 * The rollup's engine over the files written (its scope picks the objects, as the local adapter's
 * does from the bucket); `until()` leaves out the batches archived later (today's last recompute).
 */
export function engineOver(
  connection: DuckDBConnection,
  objects: readonly Written[],
  until: () => number = () => Number.POSITIVE_INFINITY,
): SqlEngine {
  return {
    name: "duckdb",
    async query(sql, params = {}, scope = {}) {
      const within = (day: string, range: DayRange) =>
        (!range.from || day >= range.from) && (!range.to || day <= range.to);
      const read = objects.filter(
        (o) =>
          o.at < until() &&
          (o.table === "raw" ? within(o.day, scope) : !!scope.edges && within(o.day, scope.edges)),
      );
      const paths = (table: "raw" | "edge") => read.filter((o) => o.table === table).map((o) => o.path);
      for (const view of duckDbArchiveViews({
        archive_events: { ndjson: paths("raw") },
        archive_edges: { ndjson: paths("edge") },
      }))
        await connection.run(view);
      const bound = bindNamed(sql, params);
      const rows = (await connection.runAndReadAll(bound.text, bound.values)).getRowObjectsJS();
      return {
        columns: [],
        rows: rows.map((r) =>
          Object.fromEntries(
            Object.entries(r).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : (v as never)]),
          ),
        ),
        bytesScanned: read.reduce((sum, o) => sum + o.bytes, 0),
      };
    },
  };
}
