/**
 * The local stack's timers: the retention windows applied on start and every hour, and the
 * activity rollup every `activityEveryMinutes`; each returns what stops it.
 */
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { errorSummary } from "../../shared/platform/errors";
import type { emulatorClients } from "./clients";
import { applyRetention } from "./retention";
import { startLocalRollups } from "./rollups";
import type { LocalStackOptions } from "./stack-options";
import type { LocalResources } from "./stack-resources";

/** How often the local stack applies its retention windows (S3 lifecycle and TTL run about daily deployed). */
const RETENTION_EVERY_MS = 3_600_000;

/**
 * Applies the retention windows now and every hour (none given: nothing to do), one run at a
 * time; a failed run is a WARN line. Returns what stops it (waiting for a run in progress).
 */
export function startRetentionTimer(
  { s3, dynamo }: Pick<ReturnType<typeof emulatorClients>, "s3" | "dynamo">,
  { bucket, tables }: LocalResources,
  options: LocalStackOptions,
): () => Promise<void> {
  const windows = options.retention;
  if (!windows) return async () => undefined;
  const doc = documentClient(dynamo);
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = running
      .then(() => applyRetention({ s3, bucket, doc, tables }, windows, Date.now()))
      .catch((error: unknown) =>
        console.error(
          JSON.stringify({ level: "WARN", message: "retention run failed", error: errorSummary(error) }),
        ),
      );
  };
  run();
  const timer = setInterval(run, RETENTION_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** The rollup timer (`activityEveryMinutes`; off at 0), and what stops it. */
export function startRollupTimer(
  { s3, dynamo }: Pick<ReturnType<typeof emulatorClients>, "s3" | "dynamo">,
  { bucket, activityTable }: LocalResources,
  options: LocalStackOptions,
): () => Promise<void> {
  if (!options.activityEveryMinutes) return async () => undefined;
  return startLocalRollups({
    s3,
    bucket,
    doc: documentClient(dynamo),
    activityTable,
    everyMs: options.activityEveryMinutes * 60_000,
    graceMs: 2 * 3_600_000,
    // The archive's window: swept by the day in its keys once a day, as the deployed schedule does.
    archiveDays: options.retention?.archiveDays,
  });
}
