/**
 * `npx webhook events [--app <appId>] [--trigger <form>…] [--limit <n>] [--follow] [--json]`: the most
 * recent events, newest first (id, receipt time, trigger, app, outcome), from the raw archive and
 * the quarantine of the local stack or, with `--stack`, a deployed one; `--follow` tails them.
 */
import { Command } from "commander";
import { projectionStores } from "../../shared/projector/stores";
import { shortId } from "../cli/event-id";
import { triggerForm } from "../cli/filters";
import { isoTime, tableLines } from "../cli/format";
import { integer, runProgram, UserFacingError, withTarget } from "../cli/program";
import { type RecentEvent, recentEvents } from "../ops/recent";
import { resolveTarget } from "../target";

const row = (e: RecentEvent) => ({
  event: shortId(e.eventId),
  time: isoTime(e.receivedAt),
  trigger: e.trigger,
  app: e.appId ?? "",
  outcome: e.outcome,
});

/** A followed event's line: fixed widths, so the lines printed as they come stay aligned. */
const followLine = (r: Record<string, string>) =>
  [r.event?.padEnd(16), r.time?.padEnd(24), r.trigger?.padEnd(28), r.app?.padEnd(16), r.outcome]
    .join("  ")
    .trimEnd();

interface EventsOptions {
  app?: string;
  trigger?: string[];
  limit: number;
  follow?: boolean;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

async function run(o: EventsOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (!target.bucket) throw new UserFacingError("the target has no data bucket");
    const bucket = target.bucket;
    const stores = projectionStores(target.dynamo, target.tables);
    const recent = (limit: number) =>
      recentEvents(target.s3, bucket, stores, { appId: o.app, triggers: o.trigger, limit });
    if (!o.follow) {
      const events = await recent(o.limit);
      if (o.json) console.log(JSON.stringify(events, null, 2));
      else for (const line of tableLines(events.map(row))) console.log(line);
      if (events.length === 0) {
        console.error(`nothing found: no events${o.app ? ` of app ${o.app}` : ""}`);
        process.exitCode = 3;
      }
      return;
    }
    // Oldest first, then each new event as it is archived; one still pending is shown once judged
    // (or after three looks).
    const looks = new Map<string, number>();
    if (!o.json)
      console.log(
        followLine({ event: "event", time: "time", trigger: "trigger", app: "app", outcome: "outcome" }),
      );
    let first = true;
    let stopped = false;
    process.once("SIGINT", () => {
      stopped = true;
    });
    while (!stopped) {
      const events = (await recent(first ? o.limit : 50)).reverse();
      for (const e of events) {
        const n = looks.get(e.eventId) ?? 0;
        if (n < 0 || (e.outcome === "pending" && n < 3 && !first)) {
          if (n >= 0) looks.set(e.eventId, n + 1);
          continue;
        }
        looks.set(e.eventId, -1);
        console.log(o.json ? JSON.stringify(e) : followLine(row(e)));
      }
      if (first) console.error("following new events (Ctrl-C stops)");
      first = false;
      for (let i = 0; i < 20 && !stopped; i++) await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("events")
    .description(
      "The most recent events, newest first, with their outcome (from the archive and the quarantine)",
    )
    .option("--app <appId>", "one app (default: all)")
    .option("--trigger <trigger...>", "only these triggers: a name, family:* or a prefix*", triggerForm)
    .option("--limit <n>", "how many", integer(1, 10_000), 20)
    .option("--follow", "then print new events as they are archived (Ctrl-C stops)")
    .option("--json", "one JSON array on stdout (--follow: one JSON object a line)"),
).action((o: EventsOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
