import { describe, expect, it } from "vitest";
import { scheduleReads, type Written } from "../../bench/activity-reads";
import { docBlock, markdownTable, withDocBlock } from "../../bench/pipeline-cost/doc-block";
import { ACCESS_LOG_RECORD_BYTES, accessLogUsd } from "../../bench/pipeline-cost/model";
import { STORAGE_PRICE, storageByMonth } from "../../bench/pipeline-cost/storage";
import {
  emfMetricKeys,
  fixedMonthlyLines,
  monitoringCounts,
  type TemplateJson,
} from "../../bench/pipeline-cost/template";

const DAY = "2026-03-02";
const at = (hhmm: string, day = DAY) => Date.parse(`${day}T${hhmm}:00Z`);
const object = (table: "raw" | "edge", written: number, day = DAY): Written => ({
  path: "",
  key: "",
  table,
  day,
  hour: new Date(written).toISOString().slice(11, 13),
  bytes: 1000,
  at: written,
});
const SCHEDULE = { everyMinutes: 15, graceMinutes: 120 };

describe("bench:activity's count of the schedule's reads (#59)", () => {
  it("reads a raw object archived at noon 57 times: the 47 ticks of its day after it, yesterday's 9 passes, the compaction", () => {
    // Counted by hand from the schedule (docs/analytics.md): a tick every 15 minutes reads today
    // so far (objects archived before the tick: 12:15 … 23:45, 47 ticks); after midnight, yesterday
    // at 00:00 … 01:45 and its final pass at 02:00 (9), then its compaction once (1).
    const reads = scheduleReads([object("raw", at("12:00"))], DAY, SCHEDULE);
    expect(reads.passes).toHaveLength(96 + 9);
    expect(reads.passes.filter((p) => p.final)).toHaveLength(1);
    expect(reads.gets).toBe(57);
    expect(reads.bytes).toBe(57_000);
  });

  it("reads an object of the day's last minutes only after midnight, an edge object not in the compaction, another day's never", () => {
    expect(scheduleReads([object("raw", at("23:59"))], DAY, SCHEDULE).gets).toBe(9 + 1);
    // A late line's edge copy for D, archived at 00:20 on D+1: yesterday's passes at 00:30 … 02:00.
    expect(scheduleReads([object("edge", at("00:20", "2026-03-03"))], DAY, SCHEDULE).gets).toBe(7);
    expect(scheduleReads([object("raw", at("12:00", "2026-03-03"), "2026-03-03")], DAY, SCHEDULE).gets).toBe(
      0,
    );
  });

  it("lists each of the 24 hour prefixes and the edge's once a pass, a page a thousand keys, scaled", () => {
    const reads = scheduleReads([object("raw", at("00:00"))], DAY, SCHEDULE, 2500);
    // The hour 00 holds 2,500 keys at scale: 3 pages; 23 empty hours and the edge: 1 each.
    expect(reads.passes.at(-1)?.lists).toBe(3 + 23 + 1);
  });
});

describe("the whole bill's prices (#59)", () => {
  it("prices an access-log record as bytes kept: a million records a year", () => {
    const gb = (1e6 * ACCESS_LOG_RECORD_BYTES) / 1024 ** 3;
    expect(accessLogUsd(1e6, 365)).toBeCloseTo(gb * 0.023 * 12, 6);
    expect(accessLogUsd(1e6, 30)).toBeLessThan(accessLogUsd(1e6, 365) / 12);
  });

  it("bills a month of storage by the days each object is held, in the class its age puts it in", () => {
    const base = {
      rawBytesADay: 1024 ** 3,
      parquetBytesADay: 0,
      parquetMoves: true,
      accessLogBytesADay: 0,
      accessLogDays: 365,
      infrequentAccessDays: 30,
      glacierDays: 180,
    };
    // 1 GB a day in Standard for 30 days: 1 + 2 + … + 30 GB-days.
    expect(storageByMonth(base)[0]?.usd).toBeCloseTo((465 * STORAGE_PRICE.standard) / (365 / 12), 6);
    // A Parquet object that moves costs less by the year's end than one left in Standard.
    const parquet = { ...base, rawBytesADay: 0, parquetBytesADay: 1024 ** 3 };
    const moved = storageByMonth(parquet)[11]?.usd ?? 0;
    const kept = storageByMonth({ ...parquet, parquetMoves: false })[11]?.usd ?? 0;
    expect(moved).toBeLessThan(kept * 0.6);
  });
});

describe("the month's fixed items, read from a template (#59)", () => {
  const template: TemplateJson = {
    Resources: {
      Errors: {
        Type: "AWS::CloudWatch::Alarm",
        Properties: { Namespace: "AWS/Lambda", MetricName: "Errors", Period: 60 },
      },
      Failures: {
        Type: "AWS::CloudWatch::Alarm",
        Properties: {
          Metrics: [
            { Id: "e", Expression: "a + b + c" },
            ...["a", "b", "c"].map((id) => ({
              Id: id,
              MetricStat: {
                Period: 300,
                Metric: {
                  Namespace: "WebhookBackend",
                  MetricName: "ProjectorEvents",
                  Dimensions: [
                    { Name: "service", Value: "projector" },
                    { Name: "outcome", Value: id },
                  ],
                },
              },
            })),
          ],
        },
      },
      Throttled: {
        Type: "AWS::Logs::MetricFilter",
        Properties: {
          MetricTransformations: [{ MetricNamespace: "WebhookBackend", MetricName: "EdgeThrottled" }],
        },
      },
      Board: { Type: "AWS::CloudWatch::Dashboard" },
      Secret: { Type: "AWS::SecretsManager::Secret" },
    },
  };

  it("bills an alarm per metric it evaluates, and counts the custom metrics alarms and metric filters name", () => {
    const counts = monitoringCounts(template);
    expect(counts).toMatchObject({ alarms: 2, alarmMetrics: 4, dashboards: 1, secrets: 1, kmsKeys: 0 });
    // The three ProjectorEvents outcomes and the filter's metric; AWS/Lambda's is not custom.
    expect(counts.customMetrics.size).toBe(4);
    const usd = Object.fromEntries(fixedMonthlyLines(template).map((l) => [l.item.split(":")[0], l.usd]));
    expect(usd.alarms).toBeCloseTo(0.4, 10);
    expect(usd["custom metrics named by alarms and metric filters"]).toBeCloseTo(1.2, 10);
  });

  it("keys a metric a function emits (EMF) as the alarm that names it does", () => {
    const line = {
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: "WebhookBackend",
            Dimensions: [["service", "outcome"]],
            Metrics: [{ Name: "ProjectorEvents" }],
          },
        ],
      },
      service: "projector",
      outcome: "b",
      ProjectorEvents: 3,
    };
    expect(monitoringCounts(template).customMetrics.has(emfMetricKeys(line)[0] ?? "")).toBe(true);
    expect(
      monitoringCounts(template).customMetrics.has(emfMetricKeys({ ...line, outcome: "d" })[0] ?? ""),
    ).toBe(false);
  });

  it("replaces a bench's block of the page in its place, an empty block too", () => {
    const page = "# Title\n\ntext\n<!-- bench:cost begin -->\n<!-- bench:cost end -->\nafter\n";
    const written = withDocBlock(page, "cost", "\n| a |\n");
    expect(written).toBe(
      "# Title\n\ntext\n<!-- bench:cost begin -->\n| a |\n<!-- bench:cost end -->\nafter\n",
    );
    expect(docBlock(written, "cost")).toBe("\n| a |\n");
    expect(() => withDocBlock(page, "activity", "x")).toThrow(/no block bench:activity/);
  });

  it("writes a table as Markdown, pipes escaped", () => {
    expect(markdownTable([{ item: "a | b", usd: 1.5 }])).toBe("| item | usd |\n|---|---|\n| a \\| b | 1.5 |");
  });
});
