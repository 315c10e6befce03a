/**
 * `npm run replay -- [--app <appId>] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--trigger <t>...] [--include-redacted] [--dry-run] [--json] [--stack <name>]`;
 * with `--quarantine`, the quarantine instead: what is accepted now goes back on the events queue;
 * with `--to-stream`, the archived deliveries are published to the stream again (same ids), and
 * the tables are left alone; with `--to-subscriber <name>`, to that one subscriber's queue only,
 * through its subscription's filter policy (a window, or one `--delivery`, is required for both).
 * A replay into the tables publishes nothing (docs/stream.md). Each holds the archive lease while
 * it runs (an erasure waits for it), waiting for it first if the schedule's pass holds it (a dry
 * run takes none).
 */
import { Command } from "commander";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { projectionStores } from "../../shared/projector/stores";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { subscriptionCount } from "../../shared/stream/subscriptions";
import { archiveLeaseFor, sayWhoHoldsTheArchive } from "../analytics/engines";
import { deliveryRef, triggerForm } from "../cli/filters";
import { count, keyValueLines } from "../cli/format";
import { runProgram, UsageError, UserFacingError, utcDayOption, withTarget } from "../cli/program";
import { replayQuarantine } from "../ops/archive-repair";
import { archiveDays } from "../ops/archive-scan";
import { replayArchive } from "../ops/operations";
import { nobodySubscribedLines, replayFailureLine, streamReplayLines } from "../ops/stream";
import {
  type DeliveryRef,
  findSubscriber,
  replayToStream,
  replayToSubscriber,
  type StreamReplayReport,
} from "../ops/stream-replay";
import { resolveTarget, type Target } from "../target";

interface ReplayCliOptions {
  app?: string;
  from?: string;
  to?: string;
  stack?: string;
  stateDir?: string;
  recordings?: boolean;
  trigger?: string[];
  dryRun?: boolean;
  json?: boolean;
  quarantine?: boolean;
  toStream?: boolean;
  toSubscriber?: string;
  delivery?: DeliveryRef;
  includeRedacted?: boolean;
}

/** The usage errors found before reaching the target: modes that exclude each other, a window backwards. */
function checkUsage(o: ReplayCliOptions): void {
  if (o.from && o.to && o.from > o.to)
    throw new UsageError(`--from ${o.from} is after --to ${o.to}: give the earlier day first`);
  const modes = [
    o.quarantine && "--quarantine",
    o.toStream && "--to-stream",
    o.toSubscriber && "--to-subscriber",
  ];
  if (modes.filter(Boolean).length > 1)
    throw new UsageError(`${modes.filter(Boolean).join(" and ")} replay to different places: give one`);
  if (o.delivery && !o.toStream && !o.toSubscriber)
    throw new UsageError(
      "--delivery replays one delivery to the stream or to a subscriber: add --to-stream or --to-subscriber <name>",
    );
  if (o.delivery && (o.from || o.to))
    throw new UsageError("--delivery names its own receipt day: leave out --from and --to");
}

async function run(o: ReplayCliOptions): Promise<void> {
  checkUsage(o);
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (!target.bucket) throw new UserFacingError("the target has no data bucket");
    if (o.toStream || o.toSubscriber) {
      await replayArchiveToStream(target, target.bucket, o);
      return;
    }
    if (o.quarantine) {
      if (!target.queues) throw new UserFacingError("the target has no events queue");
      const report = await replayQuarantine(
        target,
        { bucket: target.bucket, queueUrl: target.queues.events.url },
        archiveLeaseFor(target),
        windowOf(o),
      ).catch(sayWhoHoldsTheArchive);
      if (o.json) {
        console.log(JSON.stringify(report));
        return;
      }
      const resent = Object.values(report.resent).reduce((a, b) => a + b, 0);
      console.log(
        `${o.dryRun ? "would put back" : "put back"} ${resent} of ${report.records} quarantined events on the events queue${o.dryRun ? "" : "; recompute their receipt days: npm run rollup -- --from … --to …"}`,
      );
      for (const line of keyValueLines(Object.entries(report.resent))) console.log(`  ${line}`);
      for (const [trigger, { count, reason }] of Object.entries(report.stillRefused))
        console.log(`  still refused: ${trigger} = ${count} (${reason})`);
      if (report.redacted)
        console.log(`  left: ${count(report.redacted, "record")} an erasure redacted (never put back)`);
      return;
    }
    const archive = s3BlobStore(target.s3, target.bucket);
    const report = await replayArchive(
      target.s3,
      archive,
      {
        stores: projectionStores(target.dynamo, target.tables),
        dataStore: archive,
        recordingJobs:
          o.recordings && target.queues
            ? sqsMessageQueue(target.sqs, target.queues.recordings.url)
            : { send: async () => undefined },
        now: Date.now,
      },
      archiveLeaseFor(target),
      { ...windowOf(o), includeRedacted: o.includeRedacted },
    ).catch(sayWhoHoldsTheArchive);
    if (o.json) {
      console.log(JSON.stringify(report));
      return;
    }
    console.log(
      `${o.dryRun ? "would replay" : "replayed"} ${report.events} events from ${report.objects} archive objects (${count(report.duplicates, "duplicate line")} and ${count(report.redacted, "redacted line")} skipped${report.redacted ? ": an erasure rewrote their items" : ""})${o.dryRun ? "; predicted against the items as they are, nothing written" : ""}`,
    );
    for (const line of keyValueLines(Object.entries(report.outcomes))) console.log(`  ${line}`);
  } finally {
    target.destroy();
  }
}

/** The archive window the options name, as every kind of replay takes it. */
const windowOf = (o: ReplayCliOptions) => ({
  appId: o.app,
  from: o.from,
  to: o.to,
  triggers: o.trigger,
  dryRun: o.dryRun,
});

/**
 * A replay to the stream or to a subscriber needs its window: without one it would send the
 * whole archive to consumers (a table replay keeps its whole-archive rebuild). The refusal gives
 * the window the archive holds.
 */
async function requireWindow(target: Target, bucket: string, o: ReplayCliOptions): Promise<void> {
  if (o.delivery || (o.from && o.to)) return;
  const days = await archiveDays(target.s3, bucket, { from: o.from, to: o.to });
  const mode = o.toSubscriber ? `--to-subscriber ${o.toSubscriber}` : "--to-stream";
  throw new UsageError(
    `${mode} sends every archived delivery of its window: give both --from and --to${
      days.length
        ? ` (the archive holds receipt days ${days[0]} to ${days.at(-1)})`
        : " (the archive holds no day yet)"
    }`,
  );
}

/** `--to-stream` or `--to-subscriber`: the window's archived deliveries sent again, with a word when nobody receives them. */
async function replayArchiveToStream(target: Target, bucket: string, o: ReplayCliOptions): Promise<void> {
  if (!target.stream) throw new UserFacingError("the target has no stream topic (deployed before #41?)");
  await requireWindow(target, bucket, o);
  const { topicArn } = target.stream;
  const archive = s3BlobStore(target.s3, bucket);
  const options = { ...windowOf(o), delivery: o.delivery };
  let report: StreamReplayReport;
  if (o.toSubscriber) {
    const subscriber = await findSubscriber(target, topicArn, o.toSubscriber, target.stream.subscribers);
    report = await replayToSubscriber(
      target.s3,
      target.sqs,
      archive,
      subscriber,
      archiveLeaseFor(target),
      options,
    ).catch(sayWhoHoldsTheArchive);
  } else {
    if ((await subscriptionCount(target.sns, topicArn)) === 0)
      for (const line of nobodySubscribedLines(topicArn, o.dryRun)) console.error(line);
    report = await replayToStream(
      target.s3,
      archive,
      snsStreamPublisher(target.sns, topicArn),
      archiveLeaseFor(target),
      options,
    ).catch(sayWhoHoldsTheArchive);
  }
  if (o.json) {
    console.log(JSON.stringify(report));
    return;
  }
  for (const line of streamReplayLines(report, o.toSubscriber)) console.log(line);
  if (report.failed.length) throw new UserFacingError(replayFailureLine(report));
}

const program = withTarget(
  new Command("replay")
    .description("Re-project events from the raw archive into the tables (local stack by default)")
    .option("--app <appId>", "one app (default: all)")
    .option("--from <date>", "first receipt date, YYYY-MM-DD (or today, yesterday)", utcDayOption())
    .option("--to <date>", "last receipt date, YYYY-MM-DD (or today, yesterday)", utcDayOption())
    .option("--trigger <trigger...>", "only these triggers: a name, family:* or a prefix*", triggerForm)
    .option(
      "--quarantine",
      "replay the quarantine instead: put what is accepted now back on the events queue (dates: receipt days)",
    )
    .option(
      "--to-stream",
      "publish the archived deliveries to the stream again (same ids), for a new consumer; the tables are left alone",
    )
    .option(
      "--to-subscriber <name>",
      "send them to this subscriber's queue only (a declared subscriber, or a running listen's webhook-listen-… queue), through its filter policy",
    )
    .option(
      "--delivery <id>",
      "only this delivery, <eventId>@<receivedAt> as listen prints it (with --to-stream or --to-subscriber)",
      deliveryRef,
    )
    .option(
      "--dry-run",
      "predict each outcome against the items as they are (--to-stream, --to-subscriber: count what would be sent and billed), write nothing",
    )
    .option("--json", "one JSON object on stdout")
    .option(
      "--include-redacted",
      "apply the lines an erasure redacted too (a rebuild into empty tables; default: skipped, counted)",
    )
    .option(
      "--recordings",
      "re-send recording jobs: the recorder links the recordings already in the bucket (no re-download)",
    ),
).action((o: ReplayCliOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
