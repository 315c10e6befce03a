/**
 * `npm run simulate`: realistic, seeded platform traffic against the webhook, then a check of the
 * tables. Defaults come from the running local stack (`LOCAL_STATE_DIR/stack.json`).
 */
import { readFileSync } from "node:fs";
import { SingleBar } from "cli-progress";
import { Command } from "commander";
import { type LocalStackInfo, readStackInfo } from "../local/state";
import type { GeneratedEvent, GeneratedHistory } from "./generator";
import { runSimulation } from "./run";

const program = new Command("simulate")
  .description("Deliver a realistic, seeded history of webhook events and check the tables afterwards")
  .option("--url <url>", "webhook URL (default: the running local stack's)")
  .option("--username <user>", "Basic auth username (default: the local stack's)")
  .option("--password <password>", "Basic auth password (default: the local stack's)")
  .option("--events <n>", "number of events to generate", "2000")
  .option("--rate <n>", "deliveries per second", "200")
  .option("--concurrency <n>", "requests in flight", "8")
  .option("--seed <n>", "random seed (same seed, same history)", "7")
  .option(
    "--apps <ids>",
    "comma-separated app ids (default: two apps named after the seed, so runs with other seeds do not collide)",
  )
  .option("--duplicates <share>", "share of events delivered twice", "0.05")
  .option("--reorder <share>", "share of events swapped with a neighbour", "0.1")
  .option("--files-port <port>", "port of the recordings file server the history's URLs point to", "8099")
  .option("--out <file>", "write the generated history to a file")
  .option("--replay <file>", "replay a history written by --out")
  .option("--no-check", "do not wait for the pipeline nor check the tables")
  .option("--settle-timeout <s>", "seconds to wait for the queues to drain", "120")
  .parse();
const o = program.opts();

let stack: LocalStackInfo | undefined;
try {
  stack = readStackInfo();
} catch (error) {
  if (!o.url) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
const replay = o.replay
  ? (() => {
      const raw = JSON.parse(readFileSync(o.replay, "utf8"));
      const expected = new Map(
        raw.expected.map(([app, e]: [string, Record<string, unknown>]) => [
          app,
          {
            groups: new Map(
              (e.groups as Array<[string, { members: Array<[string, string]> }]>).map(([g, v]) => [
                g,
                { ...v, members: new Map(v.members) },
              ]),
            ),
            online: new Set(e.online as string[]),
            sessions: new Map(e.sessions as Array<[string, unknown]>),
          },
        ]),
      );
      return { events: raw.events, expected, plan: raw.plan } as GeneratedHistory & {
        plan: GeneratedEvent[];
      };
    })()
  : undefined;

const bar = new SingleBar({
  format: "delivering [{bar}] {value}/{total} {percentage}% | {eta}s left",
  stream: process.stderr,
  hideCursor: true,
});
let started = false;
const report = await runSimulation({
  url: o.url ?? stack?.webhookUrl,
  username: o.username ?? stack?.credentials.username ?? "",
  password: o.password ?? stack?.credentials.password ?? "",
  events: Number(o.events),
  rate: Number(o.rate),
  concurrency: Number(o.concurrency),
  seed: Number(o.seed),
  apps: String(o.apps ?? `sim-s${o.seed}-a1,sim-s${o.seed}-a2`)
    .split(",")
    .map((a: string) => a.trim())
    .filter(Boolean),
  duplicateShare: Number(o.duplicates),
  reorderShare: Number(o.reorder),
  stack: o.check && (!o.url || o.url === stack?.webhookUrl) ? stack : undefined,
  settleTimeoutSeconds: Number(o.settleTimeout),
  filesPort: Number(o.filesPort),
  out: o.out,
  replay,
  onProgress(sent, total) {
    if (!started) {
      bar.start(total, 0);
      started = true;
    }
    bar.update(sent);
  },
});
bar.stop();

console.log(
  `\nsent ${report.sent} deliveries in ${report.seconds.toFixed(1)} s (${report.deliveriesPerSecond.toFixed(0)}/s)`,
);
console.log("by status:", report.byStatus);
console.table(
  Object.entries(report.byTrigger)
    .sort((a, b) => b[1] - a[1])
    .map(([trigger, n]) => ({ trigger, deliveries: n })),
);
if (report.drainSeconds !== undefined)
  console.log(`queues drained ${report.drainSeconds.toFixed(1)} s after the last delivery`);
if (report.problems) {
  if (report.problems.length === 0) console.log("check: the tables match the history ✔");
  else {
    console.log(`check: ${report.problems.length} difference(s):`);
    for (const p of report.problems.slice(0, 50)) console.log(`  ${p}`);
    process.exitCode = 1;
  }
}
const rejected = Object.entries(report.byStatus).filter(([s]) => s !== "200");
if (rejected.length) process.exitCode = 1;
