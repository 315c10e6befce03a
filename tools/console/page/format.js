// How the page writes times, days and figures: ISO 8601 UTC to the second, a day as YYYY-MM-DD,
// minutes from seconds, the blank of a figure with no value yet; every view formats with these.

export const iso = (ms) =>
  ms === undefined || ms === null ? "" : new Date(ms).toISOString().replace(".000Z", "Z");
/** A time to the second, ISO 8601 UTC: the one format of every time on the page. */
export const isoSeconds = (ms) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
/** What a figure shows where it has no value yet and a note below says why (never a 0). */
export const BLANK = "—";
export const short = (id) => (id ?? "").slice(0, 16);
export const minutes = (seconds) => Math.round(((seconds ?? 0) / 60) * 100) / 100;
export const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10);
/** Whether `value` is a calendar day as every day on the page is written, YYYY-MM-DD (2026-02-30 is not). */
export const isDay = (value) =>
  /^\d{4}-\d{2}-\d{2}$/.test(value) && utcDay(Date.parse(`${value}T00:00:00Z`) || 0) === value;
/** The day `n` days after `day` (UTC). */
export const addDays = (day, n) => utcDay(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000);
