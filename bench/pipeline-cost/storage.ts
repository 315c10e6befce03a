/**
 * The data bucket's storage month by month for a year of steady traffic (#59): each day's raw
 * archive (gzip NDJSON objects of a few KB: under 128 KB, so no lifecycle rule moves them), its
 * compacted Parquet (one object of MBs a day, written the day after: it moves to Infrequent Access
 * and Glacier IR at the archive's days) and the access log's records (kept `accessLogDays`), each
 * billed for the days it is held in each class, with the fee of each transition.
 */
import { DAYS_A_MONTH } from "./model";

/** us-east-1, $ a GB-month by storage class, and $ a transition request. */
export const STORAGE_PRICE = {
  standard: 0.023,
  infrequentAccess: 0.0125,
  glacierInstantRetrieval: 0.004,
  toInfrequentAccess: 0.01 / 1000,
  toGlacierInstantRetrieval: 0.02 / 1000,
};

/** A day's bytes of each kind, and where they go. */
export interface StorageInputs {
  /** The day's raw archive and edge objects (they stay in Standard: each under 128 KB). */
  rawBytesADay: number;
  /** The day's Parquet (one object of 128 KB or more: it moves). */
  parquetBytesADay: number;
  /** Whether the Parquet moves (before #59 no rule covered `compact/`). */
  parquetMoves: boolean;
  accessLogBytesADay: number;
  accessLogDays: number;
  /** The archive's transitions, days (`archiveInfrequentAccessDays`, `archiveGlacierDays`). */
  infrequentAccessDays: number;
  glacierDays: number;
}

const GB = 1024 ** 3;

/**
 * $ of each month of the first year, and the GB held at its end: every day's bytes billed for
 * each day held, in the class its age puts it in.
 *
 * @example storageByMonth({ rawBytesADay: GB, parquetBytesADay: 0, parquetMoves: false, accessLogBytesADay: 0, accessLogDays: 1, infrequentAccessDays: 30, glacierDays: 180 })[0].usd // ≈ 0.023 × 15.7
 */
export function storageByMonth(s: StorageInputs) {
  const parquetPrice = (age: number) =>
    !s.parquetMoves || age < s.infrequentAccessDays
      ? STORAGE_PRICE.standard
      : age < s.glacierDays
        ? STORAGE_PRICE.infrequentAccess
        : STORAGE_PRICE.glacierInstantRetrieval;
  const months = [];
  for (let month = 1; month <= 12; month++) {
    let usd = 0;
    const first = Math.round((month - 1) * DAYS_A_MONTH);
    const last = Math.round(month * DAYS_A_MONTH);
    for (let today = first; today < last; today++) {
      // Each day written so far (day 0 the first), held today at age today - day.
      for (let day = 0; day <= today; day++) {
        const age = today - day;
        usd += (s.rawBytesADay / GB) * (STORAGE_PRICE.standard / DAYS_A_MONTH);
        if (age >= 1) usd += (s.parquetBytesADay / GB) * (parquetPrice(age - 1) / DAYS_A_MONTH);
        if (age < s.accessLogDays)
          usd += (s.accessLogBytesADay / GB) * (STORAGE_PRICE.standard / DAYS_A_MONTH);
      }
      if (s.parquetMoves) {
        // The Parquet object written `infrequentAccessDays` (`glacierDays`) ago moves today.
        if (today - 1 - s.infrequentAccessDays >= 0) usd += STORAGE_PRICE.toInfrequentAccess;
        if (today - 1 - s.glacierDays >= 0) usd += STORAGE_PRICE.toGlacierInstantRetrieval;
      }
    }
    const days = last;
    months.push({
      month,
      rawGb: (days * s.rawBytesADay) / GB,
      parquetGb: (Math.max(0, days - 1) * s.parquetBytesADay) / GB,
      accessLogGb: (Math.min(days, s.accessLogDays) * s.accessLogBytesADay) / GB,
      usd,
    });
  }
  return months;
}
