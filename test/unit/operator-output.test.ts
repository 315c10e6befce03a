import { describe, expect, it } from "vitest";
import { keyValueLines, tableLines } from "../../tools/cli/format";
import { readableLine } from "../../tools/local/log-tap";
import { summaryLines } from "../../tools/simulate/summary";

const ID = "33db60451d28b006".padEnd(64, "7");

describe("the local stack's readable log lines", () => {
  it("print an event id in its one printed form: the first 16 hex characters", () => {
    const line = readableLine({ level: "INFO", service: "projector", message: "event", eventId: ID });
    expect(line).toContain(`event=${ID.slice(0, 16)}`);
    expect(line).not.toContain(ID.slice(0, 17));
  });
});

describe("output a person can read", () => {
  it("one item as aligned key/value lines, leaving out what has no value", () => {
    expect(
      keyValueLines([
        ["name", "Hiking"],
        ["membersCount", 3],
        ["deletedAt", undefined],
      ]),
    ).toEqual(["name          Hiking", "membersCount  3"]);
  });

  it("several as a plain aligned table, without an index column", () => {
    expect(
      tableLines([
        { trigger: "group_created", deliveries: 12 },
        { trigger: "call_ended", deliveries: 3 },
      ]),
    ).toEqual([
      "trigger        deliveries",
      "-------------  ----------",
      "group_created  12",
      "call_ended     3",
    ]);
  });

  const report = {
    sent: 7,
    byStatus: { 200: 5, 0: 2 },
    byTrigger: { group_created: 5, call_ended: 2 },
    seconds: 1,
    deliveriesPerSecond: 7,
    history: { events: [], expected: new Map() },
    interrupted: false,
    dropped: 0,
    problems: Array.from({ length: 60 }, (_, i) => `problem ${i}`),
  };

  it("simulate's summary explains each status, prints plain tables, and says how many differences are not shown", () => {
    const { lines, code } = summaryLines(report, 100);
    const text = lines.join("\n");
    expect(text).toMatch(/^\s*200\s+accepted\s+5$/m);
    expect(text).toMatch(/^\s*0\s+no answer.*\s2$/m);
    expect(text).not.toContain("(index)");
    expect(text).not.toContain("{");
    expect(text).toContain("problem 49");
    expect(text).not.toContain("problem 50");
    expect(text).toContain("… and 10 more");
    expect(code).toBe(1);
  });
});
