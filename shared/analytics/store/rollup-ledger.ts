import * as z from "zod/mini";
import { parseJsonContract } from "../../contracts/queue-messages";
import { S3_PREFIX } from "../../platform/constants";
import type { BlobStore } from "../../ports/blob-store";

/** A day's last pass over every app (`rollupDayAllApps`), as the ledger keeps it. */
export const dayPassSchema = z.object({
  day: z.string(),
  /** When the pass started (ms): every line archived before it is counted. */
  computedAt: z.number(),
  /** Computed after the day's end plus the grace period: the schedule leaves the day alone. */
  final: z.boolean(),
  /** Engine queries the pass ran, and the archive bytes they read. */
  queries: z.number(),
  bytesScanned: z.number(),
  /** Each app's figures, by a digest of their stored form: unchanged ones are not rewritten. */
  apps: z.record(z.string(), z.string()),
  /**
   * Each app's headline totals of the day, `[messages, active users, every figure summed]`: what
   * the console ranks apps by (`appTotals`) without a query per app. Absent in passes written
   * before it existed.
   */
  totals: z.optional(z.record(z.string(), z.array(z.number()))),
  /**
   * Each app's deliveries per hour of the day (hours begun; `hourlyDeliveries`): what the watchdog
   * reads an app's usual hours and last hour from (#52, `shared/watchdog/`). Absent in passes
   * written before it existed.
   */
  hourly: z.optional(z.record(z.string(), z.array(z.number()))),
  /**
   * When a pass last saw each app's day grow (that pass's `computedAt`; carried from the previous
   * pass while it does not): when the app was last seen delivering, to the schedule's tick.
   */
  seenAt: z.optional(z.record(z.string(), z.number())),
  /**
   * Each app's deliveries of the day by the quarter of the hour of the pass that saw them grow
   * (`[:00-:15, :15-:30, :30-:45, :45-:60]`, carried from the previous pass and added to): when in
   * its hours an app usually sends, so that an app sending at the top of each hour is not expected
   * at :45 (#58). Absent in passes written before it existed (the app's hours then count evenly).
   */
  quarters: z.optional(z.record(z.string(), z.array(z.number()))),
  /** When the day, final, was compacted to Parquet (`scheduledRollup`): absent, not yet. */
  compactedAt: z.optional(z.number()),
  /**
   * When the schedule, the day being final, swept the archive of what expired by the day in its
   * keys (`archive-expiry.ts`: once a day): absent, not yet.
   */
  sweptAt: z.optional(z.number()),
});
export type DayPass = z.infer<typeof dayPassSchema>;

/** Where the rollup remembers its passes. Adapter: `blobRollupLedger`. */
export interface RollupLedger {
  pass(day: string): Promise<DayPass | undefined>;
  record(pass: DayPass): Promise<void>;
  /** The apps the passes from `from` to `to` saw, sorted. */
  apps(days: readonly string[]): Promise<string[]>;
  /**
   * Each app's totals over `days` (`DayPass.totals`, summed), and on how many of them it had a
   * pass: one read a day, whatever the number of apps. Days without totals add nothing.
   */
  appTotals(days: readonly string[]): Promise<Map<string, { totals: number[]; days: number }>>;
}

/** `rollup/date=<day>.json`. @example dayPassKey("2026-01-02") // "rollup/date=2026-01-02.json" */
export function dayPassKey(day: string): string {
  return `${S3_PREFIX.rollup}date=${day}.json`;
}

/**
 * The ledger as one small JSON object per day in the data bucket (one GET and at most one PUT a
 * day a pass: at 10,000 apps ~0.4 MB, beyond what one DynamoDB item holds). A day never passed
 * over reads as undefined (the object's absence is all the adapter interprets of a failed read:
 * `BlobStore.getBytesIfPresent`, which tells a missing key from a refused read; any other failure
 * is thrown).
 *
 * @example await blobRollupLedger(s3BlobStore(s3, bucket)).pass("2026-01-02") // { final: true, … }
 */
export function blobRollupLedger(blobs: BlobStore): RollupLedger {
  const read = async (day: string) => {
    const bytes = await blobs.getBytesIfPresent(dayPassKey(day));
    return bytes && parseJsonContract(dayPassSchema, new TextDecoder().decode(bytes), dayPassKey(day));
  };
  return {
    pass: read,
    async record(pass) {
      await blobs.put(dayPassKey(pass.day), JSON.stringify(pass), { contentType: "application/json" });
    },
    async apps(days) {
      const passes = await Promise.all(days.map(read));
      return [...new Set(passes.flatMap((p) => Object.keys(p?.apps ?? {})))].sort();
    },
    async appTotals(days) {
      const summed = new Map<string, { totals: number[]; days: number }>();
      for (const pass of await Promise.all(days.map(read)))
        for (const [app, totals] of Object.entries(pass?.totals ?? {})) {
          const into = summed.get(app) ?? { totals: [], days: 0 };
          into.totals = totals.map((n, i) => n + (into.totals[i] ?? 0));
          into.days++;
          summed.set(app, into);
        }
      return summed;
    },
  };
}
