import { describe, expect, it } from "vitest";
import {
  breakEvenRate,
  breakEvenUtilisation,
  capacityResources,
  onDemandPerMillion,
  provisionedAt,
  provisionedMonthlyMinimum,
  provisionedPerMillion,
} from "../../bench/capacity";
import { CAPACITY_DEFAULTS, type ProvisionedCapacity } from "../../infra/constructs/projection-tables";

const capacity: ProvisionedCapacity = { mode: "provisioned", ...CAPACITY_DEFAULTS };

describe("bench:cost's capacity pricing", () => {
  it("sizes each table and index as auto scaling does: consumed / target in whole units, within min and max", () => {
    const [busy, idle, huge] = provisionedAt(
      [
        { resource: "Groups", write: 0.1, read: 0.05 },
        { resource: "Sessions.withRecording", write: 0, read: 0 },
        { resource: "Presence", write: 20, read: 0 },
      ],
      100,
      capacity,
    );
    // 10 WCU/s consumed at 70%: 15 provisioned; 5 RCU/s: 8.
    expect(busy).toMatchObject({ writeUnits: 15, readUnits: 8, overMax: false });
    expect(idle).toMatchObject({ writeUnits: 1, readUnits: 1 });
    expect(huge).toMatchObject({ writeUnits: 1000, overMax: true });
  });

  it("prices a provisioned unit at the published hourly rate: it wins above 28.9% utilisation", () => {
    expect(breakEvenUtilisation()).toBeCloseTo(0.2889, 4);
    // One write unit per event at a rate that fills whole units exactly at 70%: $0.258 per million.
    const one = [{ resource: "Groups", write: 1, read: 0 }];
    const at70 = { ...capacity, minReadUnits: 1 };
    expect(provisionedPerMillion(one, 70, at70) - (0.00013 / (70 * 3600)) * 1e6).toBeCloseTo(
      (0.00065 / 0.7 / 3600) * 1e6,
      6,
    );
    expect(onDemandPerMillion(one)).toBeCloseTo(0.625, 9);
    // Idle, provisioned costs its minimum; busy enough, less than on demand.
    expect(breakEvenRate(one, capacity)).toBeGreaterThan(0);
    expect(provisionedPerMillion(one, breakEvenRate(one, capacity), capacity)).toBeLessThanOrEqual(0.625);
  });

  it("counts the fixed minimum over every table and index", () => {
    expect(capacityResources()).toHaveLength(10);
    expect(provisionedMonthlyMinimum(10, capacity)).toBeCloseTo(10 * (0.00065 + 0.00013) * 730, 9);
  });
});
