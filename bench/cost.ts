/**
 * npm run bench:cost — what a million events cost, from requests counted on the simulator's mix.
 *
 * The real handlers run unchanged against the emulators, behind counting proxies (every SQS, S3
 * and DynamoDB request they make is counted by operation); DynamoDB write and read units come from
 * the projector's own ProjectorWriteUnits/ReadUnits metrics (ReturnConsumedCapacity, index copies
 * included); log bytes are the functions' own output at the deployed log level (INFO) with their
 * metrics (EMF), plus the API access log line per request and Lambda's own start and report lines
 * per invocation at each function's deployed system log level. X-Ray traces are priced at Lambda's
 * sampling (the first invocation each second, then 5%) at BENCH_RATE events/s, for the functions
 * the stack traces. A poller plays Lambda's SQS event source with the batches it forms at
 * BENCH_RATE: the deployed batch size, or less when five batches gathered at once share the
 * stream and the window closes them first (`batchAtRate`). Priced at
 * us-east-1 list prices, next to the floor of the architecture: one HTTP API request, one ingest
 * invocation and one SQS send per event; and next to the previous defaults (the ingest traced and
 * its start and report lines logged).
 * DynamoDB is priced in both capacity modes (`capacityMode`): on demand per request unit, and
 * provisioned at a steady BENCH_RATE, each table and index sized by auto scaling from the units
 * DynamoDB reported for it (`bench/capacity.ts`).
 * Recordings are counted (jobs sent) but not fetched: their cost follows their bytes, not the events.
 * The mix runs twice, side by side: in one app, then spread over BENCH_APPS apps (1,000 by
 * default) with Zipf-like weights (`zipfWeights`: a few big apps, a long tail), as a multi-tenant
 * account sends it; the archive's S3 PUTs per delivery and the $ per million events of each.
 * A third run of the one-app mix has the stream of facts on (#41), with one subscriber: its
 * `PublishBatch` requests and billed 64 KiB chunks per event and the entries per request, next
 * to the $0 of the first two (nothing listens: no SNS request is made).
 * Then a hot group (#57, `pipeline-cost/hot-group.ts`): 500 joins of one group within two minutes,
 * 5% retried, beside the one-app mix: write units per delivery and the group item's sizes.
 * Then what the watchdog adds (#52, `pipeline-cost/watchdog.ts`): $0 per event, cents a month;
 * and the month's fixed costs at 10, 1,000 and 10,000 apps side by side (#59,
 * `pipeline-cost/fixed-month.ts`): the synthesized template's alarms, custom metrics, dashboards,
 * secrets and keys, the rollup's schedule with no traffic and the watchdog.
 */
import { writeDocBlock } from "./pipeline-cost/doc-block";
import { printFixedMonth } from "./pipeline-cost/fixed-month";
import { HOT_GROUP_LIVE_APP, hotGroupCount, hotGroupPlan, printHotGroup } from "./pipeline-cost/hot-group";
import { APPS } from "./pipeline-cost/model";
import { measure } from "./pipeline-cost/run";
import { printSideBySide } from "./pipeline-cost/side-by-side";
import { startBench } from "./pipeline-cost/start";
import { printWatchdogCost } from "./pipeline-cost/watchdog";

async function main() {
  const bench = await startBench();
  try {
    const one = await measure(bench, 1);
    const many = await measure(bench, APPS);
    const streamed = await measure(bench, 1, { stream: true });
    printSideBySide(one, many, streamed);
    const hot = await measure(bench, 1, { plan: hotGroupPlan(), print: false });
    const count = await hotGroupCount(bench);
    const live = await measure(bench, 1, { plan: hotGroupPlan(HOT_GROUP_LIVE_APP), print: false, batch: 1 });
    printHotGroup(one, hot, live, [count, await hotGroupCount(bench, HOT_GROUP_LIVE_APP)]);
    const watchdog = await printWatchdogCost();
    printFixedMonth(
      bench.synthesized,
      watchdog,
      new Set([...one.metrics, ...many.metrics, ...streamed.metrics]),
    );
    writeDocBlock("cost", "npm run bench:cost");
  } finally {
    await bench.stop();
  }
}

await main();
process.exit(0);
