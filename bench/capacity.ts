/**
 * DynamoDB capacity priced both ways, for bench:cost: on demand (per request unit) and
 * provisioned (units per second, held by auto scaling at a target utilisation between a minimum
 * and a maximum, per table and per index, as `infra/constructs/projection-tables.ts` deploys).
 */

import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import type { ProvisionedCapacity } from "../infra/constructs/projection-tables";
import { PROJECTION_TABLES, TABLE_DEFINITIONS, type TableNames } from "../shared/platform/tables";

/** us-east-1 list prices, USD (DynamoDB Standard table class). */
export const DYNAMO_PRICE = {
  onDemandWriteUnit: 0.625 / 1e6,
  onDemandReadUnit: 0.125 / 1e6,
  writeUnitHour: 0.00065,
  readUnitHour: 0.00013,
};
const HOURS_PER_MONTH = 730;

/** Units consumed per event by one table or index (the projector reads tables only). */
export interface ResourceUnits {
  resource: string;
  write: number;
  read: number;
}

/** Every table and index of the projection tables, by name (`Sessions.byTime`). */
export function capacityResources(): string[] {
  return TABLE_DEFINITIONS.flatMap((d) => [d.id, ...d.indexes.map((i) => `${d.id}.${i.name}`)]);
}

/**
 * Sums the units DynamoDB reports in its answers (`ReturnConsumedCapacity`: INDEXES on writes,
 * TOTAL on reads), per table and per index, from the raw JSON answers of PutItem, GetItem and
 * BatchGetItem.
 */
export function consumedCapacityMeter(names: TableNames) {
  const byName = new Map(PROJECTION_TABLE_NAMES.map((name) => [names[name], PROJECTION_TABLES[name].id]));
  const units = new Map(capacityResources().map((r) => [r, { write: 0, read: 0 }]));
  const add = (resource: string, kind: "write" | "read", n: number) => {
    const entry = units.get(resource);
    if (entry) entry[kind] += n;
  };
  type Consumed = {
    TableName?: string;
    CapacityUnits?: number;
    Table?: { CapacityUnits?: number };
    GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
  };
  return {
    units,
    onAnswer(op: string, body: Buffer) {
      if (!["PutItem", "GetItem", "BatchGetItem"].includes(op) || body.length === 0) return;
      const answer = JSON.parse(body.toString("utf8")) as { ConsumedCapacity?: Consumed | Consumed[] };
      const list = [answer.ConsumedCapacity ?? []].flat();
      for (const c of list) {
        const table = byName.get(c.TableName ?? "");
        if (!table) continue;
        if (op !== "PutItem") {
          add(table, "read", c.CapacityUnits ?? 0);
          continue;
        }
        add(table, "write", c.Table?.CapacityUnits ?? c.CapacityUnits ?? 0);
        for (const [index, u] of Object.entries(c.GlobalSecondaryIndexes ?? {}))
          add(`${table}.${index}`, "write", u.CapacityUnits ?? 0);
      }
    },
  };
}

/** What one table or index is provisioned with at a steady rate, and what it costs an hour. */
export interface ProvisionedResource extends ResourceUnits {
  writeUnits: number;
  readUnits: number;
  /** Consumption above the maximum: that resource throttles at this rate. */
  overMax: boolean;
  usdPerHour: number;
}

/**
 * Each table and index at a steady `rate` (events/s): auto scaling holds consumed / provisioned
 * at the target, in whole units, never below the minimum nor above the maximum.
 *
 * @example provisionedAt([{ resource: "Groups", write: 0.1, read: 0 }], 100, capacity)[0].writeUnits // 15 at 70%
 */
export function provisionedAt(
  perEvent: readonly ResourceUnits[],
  rate: number,
  capacity: ProvisionedCapacity,
): ProvisionedResource[] {
  const units = (consumed: number, min: number, max: number) =>
    Math.min(max, Math.max(min, Math.ceil(consumed / (capacity.targetPercent / 100) - 1e-9)));
  return perEvent.map((r) => {
    const writeUnits = units(r.write * rate, capacity.minWriteUnits, capacity.maxWriteUnits);
    const readUnits = units(r.read * rate, capacity.minReadUnits, capacity.maxReadUnits);
    return {
      ...r,
      writeUnits,
      readUnits,
      overMax: r.write * rate > capacity.maxWriteUnits || r.read * rate > capacity.maxReadUnits,
      usdPerHour: writeUnits * DYNAMO_PRICE.writeUnitHour + readUnits * DYNAMO_PRICE.readUnitHour,
    };
  });
}

/** DynamoDB's price per million events on demand. */
export function onDemandPerMillion(perEvent: readonly ResourceUnits[]): number {
  return (
    perEvent.reduce(
      (s, r) => s + r.write * DYNAMO_PRICE.onDemandWriteUnit + r.read * DYNAMO_PRICE.onDemandReadUnit,
      0,
    ) * 1e6
  );
}

/** DynamoDB's price per million events when provisioned, at a steady `rate` (events/s). */
export function provisionedPerMillion(
  perEvent: readonly ResourceUnits[],
  rate: number,
  capacity: ProvisionedCapacity,
): number {
  const perHour = provisionedAt(perEvent, rate, capacity).reduce((s, r) => s + r.usdPerHour, 0);
  return (perHour / (rate * 3600)) * 1e6;
}

/** Every table and index at its minimum units, a month (730 hours): what provisioned mode costs idle. */
export function provisionedMonthlyMinimum(resources: number, capacity: ProvisionedCapacity): number {
  return (
    resources *
    (capacity.minWriteUnits * DYNAMO_PRICE.writeUnitHour +
      capacity.minReadUnits * DYNAMO_PRICE.readUnitHour) *
    HOURS_PER_MONTH
  );
}

/**
 * The utilisation (consumed / provisioned) above which a provisioned unit costs less than the
 * same use on demand. Writes and reads give the same figure: both price ratios are 5.
 *
 * @example breakEvenUtilisation() // 0.2889: $0.00065 per WCU-hour is $0.18 per million units at 100%
 */
export function breakEvenUtilisation(): number {
  return DYNAMO_PRICE.writeUnitHour / 3600 / DYNAMO_PRICE.onDemandWriteUnit;
}

/** The lowest steady rate (events/s, to 2 significant digits) from which provisioned capacity costs less on this mix. */
export function breakEvenRate(perEvent: readonly ResourceUnits[], capacity: ProvisionedCapacity): number {
  const onDemand = onDemandPerMillion(perEvent);
  for (let exponent = -2; exponent <= 5; exponent += 0.01) {
    const rate = Number((10 ** exponent).toPrecision(2));
    if (provisionedPerMillion(perEvent, rate, capacity) <= onDemand) return rate;
  }
  return Number.POSITIVE_INFINITY;
}
