/**
 * Drawn delivery histories for the silence rule's tests (#52): an app's deliveries per quarter of
 * an hour over 8 UTC days, from a rate profile (a day rate, quiet hours at night, quiet days),
 * Poisson per quarter from a seeded generator; and what the ledger would tell of them at a pass
 * (`AppDeliveries`: the hours so far, and the pass that last saw the app grow).
 */
import type { AppDeliveries } from "../../shared/watchdog/silence";
import { Random } from "../../tools/simulate/random";

export const QUARTER_MS = 15 * 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** Day 0 of every drawn history: a Monday. */
export const EPOCH = Date.UTC(2026, 0, 5);

export interface RateProfile {
  /** Deliveries an hour outside quiet hours. */
  dayRate: number;
  /** Quiet hours: from `quietFrom` (UTC hour), `quietHours` long, at `nightRate` an hour. */
  quietFrom: number;
  quietHours: number;
  nightRate: number;
  /** Days (0 = Monday) on which the app sends nothing (a weekday-only app: 5 and 6). */
  quietDays: readonly number[];
}

/** A uniform draw in [0, 1) from a seeded generator (the simulator's). */
export function uniform(seed: number): () => number {
  const random = new Random(seed);
  return () => random.next();
}

/** A Poisson draw of mean `mean` (Knuth under 30, a normal approximation above). */
export function poisson(mean: number, next: () => number): number {
  if (mean <= 0) return 0;
  if (mean < 30) {
    const limit = Math.exp(-mean);
    let k = 0;
    for (let p = next(); p > limit; p *= next()) k++;
    return k;
  }
  const z = Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
  return Math.max(0, Math.round(mean + Math.sqrt(mean) * z));
}

/** The profile's rate at `at` (ms), deliveries an hour. */
export function rateAt(profile: RateProfile, at: number): number {
  const day = Math.floor((at - EPOCH) / DAY_MS);
  if (profile.quietDays.includes(((day % 7) + 7) % 7)) return 0;
  const hour = new Date(at).getUTCHours();
  const intoQuiet = (hour - profile.quietFrom + 24) % 24;
  return intoQuiet < profile.quietHours ? profile.nightRate : profile.dayRate;
}

/** Deliveries per quarter hour from EPOCH over `days` days; none from `stopAt` on. */
export function drawQuarters(profile: RateProfile, seed: number, days = 8, stopAt = Infinity): number[] {
  const next = uniform(seed);
  return Array.from({ length: days * 96 }, (_, q) => {
    const at = EPOCH + q * QUARTER_MS;
    return at >= stopAt ? 0 : poisson(rateAt(profile, at) / 4, next);
  });
}

/**
 * What the ledger tells of `quarters` at a pass at `now` (on a quarter): the hours' deliveries so
 * far, and the pass that last saw the app grow (the end of its last quarter with any).
 */
export function ledgerView(quarters: readonly number[], now: number): AppDeliveries {
  const days = new Map<number, number[]>();
  let lastSeenAt: number | undefined;
  for (let q = 0; q < quarters.length; q++) {
    const start = EPOCH + q * QUARTER_MS;
    const count = quarters[q] ?? 0;
    if (start + QUARTER_MS > now || count === 0) continue;
    const day = Math.floor(start / DAY_MS) * DAY_MS;
    const hours = days.get(day) ?? Array<number>(24).fill(0);
    const h = Math.floor((start - day) / HOUR_MS);
    hours[h] = (hours[h] ?? 0) + count;
    days.set(day, hours);
    lastSeenAt = start + QUARTER_MS;
  }
  return { days, ...(lastSeenAt === undefined ? {} : { lastSeenAt }) };
}

/** The 7 days before day 7 (today), each with a pass. */
export const KNOWN_DAYS = Array.from({ length: 7 }, (_, d) => EPOCH + d * DAY_MS);
