import { distance } from "fastest-levenshtein";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { daysInRange } from "../../shared/analytics/rollup";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { activityStoreFor } from "../analytics/engines";
import { NothingFoundError } from "../cli/program";
import { readStats, stateDir } from "../local/state";
import { scanArchive } from "../ops/archive-scan";
import type { Target } from "../target";

/** How many of the newest archive lines are read for apps no rollup pass has seen yet. */
const RECENT_LINES = 400;

/** The nearest known app ids named when an app has no events. */
const NEAREST = 3;

/** How far back the rollup's passes are read for the apps they saw. */
const LEDGER_DAYS = 7;

/**
 * Whether `appId` has ever delivered to the target, and the app ids it knows, from what answers
 * cheapest first: locally the stack's counters (every outcome since the state directory began);
 * the activity table (a day of figures, ever: one Query); the rollup's passes of the last week
 * (one GET a day) and the newest archive lines (an app whose first events came since the last
 * pass). An app none of them knows has no events: nothing was accepted for it, or so long ago
 * that no figure was ever computed (an archive restored without a rollup).
 *
 * @example await appEvidence(target, "sim-s7-a9") // { delivered: false, known: ["sim-s7-a1", "sim-s7-a2"] }
 */
export async function appEvidence(
  target: Target,
  appId: string,
  dir?: string,
): Promise<{ delivered: boolean; known: string[] }> {
  const known = new Set<string>();
  if (target.kind === "local") for (const app of Object.keys(readStats(stateDir(dir)).apps)) known.add(app);
  if (known.has(appId)) return { delivered: true, known: [...known] };
  if (target.activityTable) {
    const days = await activityStoreFor(target).days(appId, "2000-01-01", utcDay(Date.now()));
    if (days.length) return { delivered: true, known: [...known, appId] };
  }
  if (target.bucket) {
    const today = Date.now();
    const ledger = blobRollupLedger(s3BlobStore(target.s3, target.bucket));
    for (const app of await ledger.apps(
      daysInRange(utcDay(today - (LEDGER_DAYS - 1) * 86_400_000), utcDay(today)),
    ))
      known.add(app);
    let lines = 0;
    await scanArchive(target.s3, target.bucket, {}, "newest", (line) => {
      if (line.appId !== undefined) known.add(line.appId);
      return ++lines >= RECENT_LINES || line.appId === appId ? "stop" : undefined;
    });
  }
  return { delivered: known.has(appId), known: [...known] };
}

/**
 * The known app ids nearest to `appId` by edit distance (then by name), at most `limit`.
 *
 * @example nearestApps("sim-s7-a9", ["sim-s7-a1", "other", "sim-s7-a2"]) // ["sim-s7-a1", "sim-s7-a2", "other"]
 */
export function nearestApps(appId: string, known: readonly string[], limit = NEAREST): string[] {
  return [...new Set(known)]
    .filter((a) => a !== appId)
    .map((a) => ({ a, d: distance(appId, a) }))
    .sort((x, y) => x.d - y.d || x.a.localeCompare(y.a))
    .slice(0, limit)
    .map(({ a }) => a);
}

/**
 * What to say of an app that has never delivered (`appEvidence`), naming the nearest known app
 * ids; undefined when it has delivered.
 *
 * @example await undeliveredAppText(target, "sim-s7-a9") // "app sim-s7-a9 has no events (nearest known apps: sim-s7-a1, sim-s7-a2)"
 */
export async function undeliveredAppText(
  target: Target,
  appId: string,
  dir?: string,
): Promise<string | undefined> {
  const { delivered, known } = await appEvidence(target, appId, dir);
  if (delivered) return undefined;
  const nearest = nearestApps(appId, known);
  return `app ${appId} has no events${nearest.length ? ` (nearest known apps: ${nearest.join(", ")})` : ": this stack has received none yet"}`;
}

/**
 * Refuses an app that has never delivered (`undeliveredAppText`) with a `NothingFoundError` (exit
 * code 3) that says so and names the nearest known app ids; nothing is computed or written for it.
 *
 * @throws NothingFoundError `app sim-s7-a9 has no events (nearest known apps: sim-s7-a1, sim-s7-a2)`
 */
export async function assertAppDelivered(target: Target, appId: string, dir?: string): Promise<void> {
  const text = await undeliveredAppText(target, appId, dir);
  if (text) throw new NothingFoundError(text);
}
