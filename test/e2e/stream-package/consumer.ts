// A team's consumer, as it would write it against the installed tarball (the stream package test
// copies this file into a scratch project outside the repository, type-checks it with tsc and
// runs it): a Lambda-style batch handler that folds each delivery into its copy of the tables.
// Input: a JSON file of SQS events (one per batch); output: the copy's facts and the failures.
import { readFileSync } from "node:fs";
import {
  type DeliveryEnvelope,
  PROJECTION_TABLE_NAMES,
  type StreamBatchResponse,
  type StreamQueueEvent,
  streamBatchProcessor,
  streamCopy,
} from "@webhook-backend/stream";

const copy = streamCopy();
const reacted: string[] = [];
const handler = streamBatchProcessor({
  onDelivery: async (delivery: DeliveryEnvelope) => {
    await copy.apply([delivery]);
    reacted.push(delivery.id);
  },
  onErasure: async (notice) => copy.erase(notice),
});

const batches = JSON.parse(readFileSync(process.argv[2] ?? "", "utf8")) as StreamQueueEvent[];
const failures: StreamBatchResponse["batchItemFailures"] = [];
for (const batch of batches) failures.push(...(await handler(batch)).batchItemFailures);

const facts: Record<string, unknown> = {};
for (const table of PROJECTION_TABLE_NAMES)
  for (const [id, item] of copy.facts(table)) facts[`${table}:${id}`] = item;
process.stdout.write(JSON.stringify({ reacted, failures, facts }));
