/**
 * `npx webhook forget [<uid>] --app <appId> [--dry-run] [--keep-recordings] [--yes] [--by <who>] [--stack <name>] [--json]`:
 * erases one user of an app (or, without a uid, the whole app) from the archive, the tables,
 * the recordings and the figures (`shared/erasure/forget.ts`; docs/personal-data.md).
 */
import { userInfo } from "node:os";
import { AthenaClient } from "@aws-sdk/client-athena";
import { Command } from "commander";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import type { ArchiveCompactor } from "../../shared/analytics/compaction";
import { athenaEngine } from "../../shared/analytics/engines/athena-sql-engine";
import { duckDbCompactor } from "../../shared/analytics/engines/duckdb-compactor";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import { dynamoErasedSubjects } from "../../shared/erasure/erased-subjects";
import { pendingErasure } from "../../shared/erasure/erasure-state";
import { type ForgetDependencies, forget } from "../../shared/erasure/forget";
import { s3ObjectVersions, UNVERSIONED } from "../../shared/erasure/object-versions";
import { EVENTS_QUEUE } from "../../shared/platform/queues";
import { erasureNoticePublisher } from "../../shared/stream/erasure-notice";
import { LISTENER_SWITCH_CACHE_MS } from "../../shared/stream/listener-switch";
import { snsStreamPublisher } from "../../shared/stream/sns-publisher";
import { activityStoreFor, commandLeaseWait, compactorFor, sqlEngineFor } from "../analytics/engines";
import { forgetNotes, forgetReportLines } from "../cli/forget-output";
import { integer, runProgram, UsageError, UserFacingError, withTarget } from "../cli/program";
import { LOCAL_SWITCH_CACHE_SECONDS } from "../local/stack-handlers";
import { assertAppDelivered } from "../query/known-apps";
import { resolveTarget, type Target } from "../target";

interface ForgetCliOptions {
  app: string;
  dryRun?: boolean;
  keepRecordings?: boolean;
  yes?: boolean;
  by?: string;
  graceMinutes: number;
  json?: boolean;
  stack?: string;
  stateDir?: string;
}

/** The search, versions and compactor of the target: DuckDB and no versions locally, Athena and S3 versions deployed. */
function archiveParts(target: Target): Pick<ForgetDependencies, "search" | "versions" | "compactor"> {
  if (!target.bucket) throw new UserFacingError("the target has no data bucket");
  const { s3, bucket } = target;
  if (target.kind === "local")
    return {
      search: duckDbEngine({ s3, bucket, objectPaths: true }),
      versions: UNVERSIONED,
      compactor: duckDbCompactor({ s3, bucket }),
    };
  if (!target.athena) throw new UserFacingError("the stack has no Athena workgroup (deployed before #20?)");
  // The NDJSON tables themselves (no `archive` option): their "$path" names each line's object.
  const search: SqlEngine = athenaEngine({ client: new AthenaClient({}), ...target.athena });
  const compactor: ArchiveCompactor = compactorFor(target);
  return { search, versions: s3ObjectVersions(s3, bucket), compactor };
}

async function run(uid: string | undefined, o: ForgetCliOptions): Promise<void> {
  if (uid === undefined && !o.dryRun && !o.yes)
    throw new UsageError(
      `forget without a uid erases the whole app ${o.app}: run it with --dry-run first, then with --yes`,
    );
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (!target.activityTable)
      throw new UserFacingError("the target has no activity table (deployed before #20?)");
    const doc = documentClient(target.dynamo);
    const state = { doc, tableName: target.activityTable };
    // An app that never delivered (a typo, another stack's): said, with the nearest apps, exit 3, as
    // query does; not "erased". An erasure under way is completed whatever is left of the app.
    if (!(await pendingErasure(state, o.app, uid))) await assertAppDelivered(target, o.app, o.stateDir);
    const deps: ForgetDependencies = {
      s3: target.s3,
      bucket: target.bucket ?? "",
      ...archiveParts(target),
      doc,
      tables: target.tables,
      state,
      // The schedule's passes hold the lease for seconds every tick: wait for it (5 minutes, or
      // until the lease found lapses: a run of this erasure that was killed is waited out).
      leaseWait: commandLeaseWait(),
      rollup: {
        engine: sqlEngineFor(target),
        store: activityStoreFor(target),
        now: Date.now,
        graceMs: o.graceMinutes * 60_000,
      },
      queues: target.queues && {
        sqs: target.sqs,
        urls: {
          "events queue": target.queues.events.url,
          "events dead-letter queue": target.queues.events.deadLetterUrl,
          "recordings queue": target.queues.recordings.url,
          "recordings dead-letter queue": target.queues.recordings.deadLetterUrl,
          // Envelopes whose publish kept failing (#41): `redrive --stream` redacts them with the marks.
          ...(target.stream?.unpublishedUrl && { "stream unpublished queue": target.stream.unpublishedUrl }),
        },
        // What the projector takes off (the dead letters once redriven), and what `redrive --stream`
        // publishes: redacted in flight with `erased`.
        projected: ["events queue", "events dead-letter queue", "stream unpublished queue"],
      },
      now: Date.now,
      // The erased subjects the projector reads (#50): a delivery in flight naming the user is
      // redacted. Every projector does once its cache of the apps table has the mark and a batch
      // that read it before has ended: the erasure waits that long before its last look.
      ...(target.appsTable && {
        erased: {
          subjects: dynamoErasedSubjects(doc, target.appsTable),
          settleMs:
            (target.kind === "local" ? LOCAL_SWITCH_CACHE_SECONDS * 1000 : LISTENER_SWITCH_CACHE_MS) +
            EVENTS_QUEUE.consumerTimeoutSeconds * 1000,
        },
      }),
      // The stream's erasure notice (#41): every subscriber of the app is told, past its filter.
      ...(target.stream && {
        onErased: erasureNoticePublisher(snsStreamPublisher(target.sns, target.stream.topicArn)),
      }),
    };
    const report = await forget(deps, {
      appId: o.app,
      uid,
      dryRun: o.dryRun,
      keepRecordings: o.keepRecordings,
      requestedBy: o.by ?? userInfo().username,
    });
    if (o.json) console.log(JSON.stringify(report, null, 2));
    else
      for (const line of forgetReportLines(report, { notified: target.stream !== undefined }))
        console.log(line);
    for (const note of forgetNotes(report, uid)) console.error(note);
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("forget")
    .description(
      "Erase one user of an app (or, without a uid, the whole app) from the archive, the tables, the recordings and the figures; every figure stays exact (the user becomes a random pseudonym)",
    )
    .argument("[uid]", "the user's uid (absent: the whole app, with --yes)")
    .requiredOption("--app <appId>", "the app the user belongs to")
    .option("--dry-run", "find and report what would change, change nothing")
    .option("--keep-recordings", "keep the recordings of the user's calls (listed in the report)")
    .option("--yes", "confirm a whole-app erasure")
    .option("--by <who>", "who asked, for the erasure record (default: the operator's user name)")
    .option(
      "--grace-minutes <minutes>",
      "a recomputed day is final this long after its end",
      integer(0, 1440),
      120,
    )
    .option("--json", "the report as JSON on stdout"),
).action((uid: string | undefined, o: ForgetCliOptions) => run(uid, o));

process.exitCode = await runProgram(program, process.argv.slice(2));
