/** `npm run replay -- [--app <appId>] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--stack <name>]`. */
import { Command } from "commander";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { projectionStores } from "../../shared/projector/stores";
import { resolveTarget } from "../target";
import { replayArchive } from "./operations";

const o = new Command("replay")
  .description("Re-project events from the raw archive into the tables (local stack by default)")
  .option("--app <appId>", "one app (default: all)")
  .option("--from <date>", "first receipt date, YYYY-MM-DD")
  .option("--to <date>", "last receipt date, YYYY-MM-DD")
  .option(
    "--recordings",
    "re-send recording jobs: the recorder links the recordings already in the bucket (no re-download)",
  )
  .option("--stack <name>", "a deployed stack's name")
  .parse()
  .opts<{ app?: string; from?: string; to?: string; stack?: string; recordings?: boolean }>();

const target = await resolveTarget({ stack: o.stack });
try {
  if (!target.bucket) throw new Error("the target has no data bucket");
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
    { appId: o.app, from: o.from, to: o.to },
  );
  console.log(
    `replayed ${report.events} events from ${report.objects} archive objects (${report.duplicates} duplicate lines skipped)`,
  );
  console.table(report.outcomes);
} finally {
  target.destroy();
}
