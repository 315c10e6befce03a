/**
 * A cost run's report: each priced item, the total against the architecture's floor and the
 * previous defaults, DynamoDB in both capacity modes at BENCH_RATE, the stream's publishes and
 * the requests counted.
 */
import { readDeploymentConfig, tableCapacity } from "../../infra/config";
import type { ProvisionedCapacity } from "../../infra/constructs/projection-tables";
import {
  breakEvenRate,
  breakEvenUtilisation,
  capacityResources,
  DYNAMO_PRICE,
  onDemandPerMillion,
  provisionedAt,
  provisionedMonthlyMinimum,
  provisionedPerMillion,
  type ResourceUnits,
} from "../capacity";
import { CONCURRENT_BATCHES } from "../support";
import { reportLine, reportTable } from "./doc-block";
import { type costLines, countedBefore, PRICE, RATE, type RunCounts, sumPerMillion } from "./model";
import type { Bench } from "./start";

/**
 * Both capacity modes at BENCH_RATE: per table and index what auto scaling provisions (the
 * deployment's defaults for provisioned mode), then $ per million events in each mode, the fixed
 * monthly minimum and where provisioned starts to win.
 */
function printCapacityModes(perEvent: ResourceUnits[], onDemandTotal: number, onDemandDynamo: number) {
  const config = readDeploymentConfig({ capacityMode: "provisioned" });
  const capacity = tableCapacity(config) as ProvisionedCapacity;
  const sized = provisionedAt(perEvent, RATE, capacity);
  console.log(
    `DynamoDB capacity at ${RATE} events/s; provisioned: target ${capacity.targetPercent}%, ${capacity.minWriteUnits}-${capacity.maxWriteUnits} write and ${capacity.minReadUnits}-${capacity.maxReadUnits} read units per table and index (the capacity* defaults)`,
  );
  console.table(
    sized.map((r) => ({
      "table or index": r.resource,
      "write units / event": Number(r.write.toFixed(4)),
      "WCU provisioned": r.writeUnits,
      "read units / event": Number(r.read.toFixed(4)),
      "RCU provisioned": r.readUnits,
      "$ a month": Number((r.usdPerHour * 730).toFixed(2)),
    })),
  );
  // The meter reads DynamoDB's answers; the table above uses the projector's own metric: the same units.
  const metered = onDemandPerMillion(perEvent);
  const provisioned = provisionedPerMillion(perEvent, RATE, capacity);
  const total = onDemandTotal - onDemandDynamo + provisioned;
  const resources = capacityResources().length;
  const p = DYNAMO_PRICE;
  console.log(
    `prices (us-east-1, DynamoDB Standard): on demand $${p.onDemandWriteUnit * 1e6} per million write request units, $${p.onDemandReadUnit * 1e6} per million read request units; provisioned $${p.writeUnitHour} per WCU-hour, $${p.readUnitHour} per RCU-hour`,
  );
  console.log(
    `on-demand: $${onDemandTotal.toFixed(2)} per million events (DynamoDB $${onDemandDynamo.toFixed(3)}; from DynamoDB's own answers $${metered.toFixed(3)})`,
  );
  console.log(
    `provisioned at ${RATE} events/s: $${total.toFixed(2)} per million events (DynamoDB $${provisioned.toFixed(3)}, ${(onDemandDynamo / provisioned).toFixed(1)}x less)${sized.some((r) => r.overMax) ? "; some table or index above its maximum: throttled" : ""}`,
  );
  console.log(
    `provisioned fixed minimum: $${provisionedMonthlyMinimum(resources, capacity).toFixed(2)} a month (${resources} tables and indexes at ${capacity.minWriteUnits} WCU and ${capacity.minReadUnits} RCU each)`,
  );
  const perUnitAtTarget = p.writeUnitHour / 3600 / (capacity.targetPercent / 100);
  console.log(
    `provisioned wins above ${(breakEvenUtilisation() * 100).toFixed(1)}% utilisation (consumed / provisioned units; a write unit is $${((p.writeUnitHour / 3600) * 1e6).toFixed(3)} per million at 100%, $${(perUnitAtTarget * 1e6).toFixed(3)} at ${capacity.targetPercent}%); on this mix at target ${capacity.targetPercent}% from ${breakEvenRate(perEvent, capacity)} events/s`,
  );
}

/** A run's tables: each priced item, the total against the floor, both capacity modes, the requests counted. */
export function printRun(
  bench: Bench,
  r: {
    appCount: number;
    apps: number;
    counts: RunCounts;
    lines: ReturnType<typeof costLines>;
    previous: ReturnType<typeof costLines>;
    stream?: boolean;
  },
): void {
  const { n } = r.counts;
  const { deployed } = bench;
  const floor = PRICE.httpApiRequest * 1e6 + PRICE.lambdaRequest * 1e6 + PRICE.sqsRequest * 1e6;
  const total = sumPerMillion(r.lines);
  reportTable(
    `cost on the simulator's mix${r.stream ? ", the stream on with one subscriber" : ""}: ${n} deliveries of ${r.appCount === 1 ? "one app" : `${r.apps} of ${r.appCount} apps (Zipf-like weights)`} (5% duplicated, 10% reordered) at ${RATE} events/s; batches of ${bench.batch} (batch size ${deployed.projectorBatchSize}, window ${deployed.projectorBatchingWindowSeconds} s, ${CONCURRENT_BATCHES === 1 ? "one batch" : `${CONCURRENT_BATCHES} batches`} gathered at once)`,
    r.lines.map((l) => ({
      "per event": l.item,
      count: Number(l.perEvent.toFixed(4)),
      "$ per million events": Number(l.perMillion.toFixed(4)),
    })),
  );
  reportLine(
    `$ per million events: ${total.toFixed(2)} (without the items #59 added, Lambda duration, the access log and log storage, as counted before: ${countedBefore(r.lines).toFixed(2)}); floor (HTTP API + ingest invocation + SQS send): ${floor.toFixed(2)}; ratio ${(total / floor).toFixed(2)}`,
  );
  console.log(
    `previous defaults (the ingest traced, its start and report lines logged): ${sumPerMillion(r.previous).toFixed(2)}; ratio ${(sumPerMillion(r.previous) / floor).toFixed(2)}`,
  );
  printCapacityModes(
    [...bench.meter.units].map(([resource, u]) => ({ resource, write: u.write / n, read: u.read / n })),
    total,
    r.lines.filter((l) => l.item.startsWith("DynamoDB")).reduce((sum, l) => sum + l.perMillion, 0),
  );
  const c = r.counts;
  console.log(
    `stream: ${c.publishRequests} PublishBatch requests (${(c.publishRequests / n).toFixed(4)} per event), ${c.publishChunks} billed 64 KiB chunks (${(c.publishChunks / n).toFixed(4)} per event), ${c.publishRequests ? (c.publishEntries / c.publishRequests).toFixed(1) : "-"} entries per request of 10: $${((c.publishChunks / n) * PRICE.snsChunk * 1e6).toFixed(3)} per million events${r.stream ? "" : " (nothing listens: no SNS request, no client loaded)"}; the listener switch: one 0.5-unit read a minute per projector container`,
  );
  console.log(
    `recording jobs sent: ${(bench.aws.counts.get("SendMessage") ?? 0) - n} (each recording's cost follows its bytes); the month's fixed items (alarms, custom metrics, dashboards, secrets, keys) are printed at the end`,
  );
  console.log(
    "requests counted:",
    Object.fromEntries([...bench.aws.counts, ...bench.dynamodb.counts].sort()),
  );
}
