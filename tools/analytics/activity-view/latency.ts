/**
 * `--latency`: first responses, deliveries and reads, how many and their percentiles in seconds;
 * the figures of the wide row, and a row per day and measure in the text that fits (a percentile
 * of nothing measured blank, not 0 s).
 */
import type { Figures } from "../../../shared/analytics/figures";
import type { StoredDay } from "../../../shared/analytics/store/activity-store";
import { byDay, type Section } from "./text";

/** `--latency`: first responses, deliveries and reads: how many, and their percentiles (shown in seconds). */
export const LATENCY_COLUMNS: ReadonlyArray<keyof Figures> = [
  "first_responses",
  "first_response_p50_ms",
  "first_response_p90_ms",
  "delivery_latencies",
  "delivery_latency_p50_ms",
  "delivery_latency_p90_ms",
  "delivery_latency_p99_ms",
  "read_latencies",
  "read_latency_p50_ms",
  "read_latency_p90_ms",
  "read_latency_p99_ms",
];

/** `--latency`'s three measures: the count figure and the percentile figures of each. */
const LATENCY_MEASURES = [
  ["first_response", "first_responses", "first_response_p"],
  ["delivery", "delivery_latencies", "delivery_latency_p"],
  ["read", "read_latencies", "read_latency_p"],
] as const;

/** `--latency` a row per day and measure: how many, and the percentiles in seconds. */
export function latencySections(days: readonly StoredDay[], missing: readonly string[]): Section[] {
  const columns = ["day", "measure", "count", "p50_s", "p90_s", "p99_s"];
  const figures = (d: StoredDay) => d.figures as Record<string, number | undefined>;
  const seconds = (ms: number | undefined) => (ms === undefined ? "" : ms / 1000);
  return [
    {
      title:
        "First response (1:1 replies), delivery and read times, in seconds: nearest-rank percentiles of the day's messages, blank when there is none to measure (first responses: no p99).",
      columns,
      rows: byDay(
        days,
        missing,
        columns,
      )((d) =>
        LATENCY_MEASURES.map(([measure, count, p]) => {
          // A percentile of nothing measured is no time at all, not 0 s.
          const of = (ms: number | undefined) => (figures(d)[count] ? seconds(ms) : "");
          return {
            day: d.day,
            measure,
            count: figures(d)[count],
            p50_s: of(figures(d)[`${p}50_ms`]),
            p90_s: of(figures(d)[`${p}90_ms`]),
            p99_s: of(figures(d)[`${p}99_ms`]),
          };
        }),
      ),
    },
  ];
}
