/*
 * The queues' second chances and the stream in the writers model (issue #50): deliveries left
 * queued (the projector lagging), a drain of them (its batches projected twice, as a redelivery
 * would), a projector fault that dead-letters them, `redrive` (events: DLQ -> queue), a publish
 * fault that keeps facts in the stream's unpublished queue, `redrive --stream`, and the stream's
 * replays from the archive (`replay --to-stream`, `--to-subscriber`).
 */
import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import type { SQSRecord } from "aws-lambda";
import { s3BlobStore } from "../../../../shared/adapters/s3-blob-store";
import { projectSqsBatch } from "../../../../shared/projector/batch";
import { redrive } from "../../../../tools/ops/operations";
import { erasedMarksRedaction, redriveUnpublished } from "../../../../tools/ops/stream";
import { findSubscriber, replayToStream, replayToSubscriber } from "../../../../tools/ops/stream-replay";
import {
  drainEvents,
  leaseOf,
  projectorDeps,
  silent,
  streamWiring,
  type Wiring,
} from "../../../support/writers-model/cores";
import type { Model, OpSpec } from "../../../support/writers-model/model";
import { readSnapshot } from "../../../support/writers-model/snapshot";
import { topicPublisher } from "../../../support/writers-model/stream";
import { acknowledge } from "./deliver";

/** The stream's operations, as drawn (`OpSpec`'s members of this family). */
export type StreamOp = Extract<
  OpSpec,
  { op: "queue" | "drain" | "stall" | "unpublish" | "redrive" | "replayStream" }
>;

/** Receives the projector makes of a message before SQS dead-letters it (5), and one more. */
const PAST_MAX_RECEIVES = 7;

/** Runs one of the stream's operations; returns what it did, for the log. */
export async function runStreamOp(m: Model, w: Wiring, o: StreamOp): Promise<string> {
  switch (o.op) {
    case "queue":
      // The platform delivers; the projector lags: the deliveries stay queued.
      return `${await acknowledge(m, w, { facts: o.facts, retry: false })} acknowledged, left queued`;
    case "drain":
      return drain(m, w, o.again ?? false);
    case "stall":
      return withFault(w, "throttle", async () => {
        // DynamoDB and S3 throttle the projector's every request (injected: the emulators cannot
        // on demand) for one drain, long enough for SQS to dead-letter what it received unarchived.
        const drained = await drainEvents(w, PAST_MAX_RECEIVES);
        return `projector throttled: ${drained.handled} handled, ${drained.failed} failed (dead-lettered past ${PAST_MAX_RECEIVES - 2} receives)`;
      });
    case "unpublish":
      return withFault(w, "publish", async () => {
        // SNS throttles every PublishBatch (injected: fauxqs cannot on demand) for one drain: each
        // record fails until its last receive, which keeps its fact in the unpublished queue.
        const drained = await drainEvents(w, PAST_MAX_RECEIVES);
        return `SNS throttled: ${drained.handled} handled, ${drained.failed} failed`;
      });
    case "redrive": {
      if (o.stream) {
        const report = await redriveUnpublished(
          w.clients.sqs,
          w.site.stream.unpublishedUrl,
          topicPublisher(streamWiring(w)),
          // As tools/commands/redrive.ts wires it: the marks of the run's apps table, on its clock.
          erasedMarksRedaction(w.clients.doc, w.site.appsTable, () => w.site.clock.now),
        );
        return `redrive --stream: ${report.moved} published, ${report.failed} failed`;
      }
      const moved = await redrive(w.clients.sqs, w.site.stream.deadLetterUrl, w.site.queueUrl);
      return `redrive: ${moved} moved back to the events queue`;
    }
    case "replayStream": {
      const archive = s3BlobStore(w.clients.s3, w.site.bucket);
      const options = o.app ? { appId: o.app } : {};
      const report = o.subscriber
        ? await replayToSubscriber(
            w.clients.s3,
            w.clients.sqs,
            archive,
            await findSubscriber(w.clients, w.site.stream.topicArn, "model", {
              model: w.site.stream.subscriberUrl,
            }),
            leaseOf(w),
            options,
          )
        : await replayToStream(w.clients.s3, archive, topicPublisher(streamWiring(w)), leaseOf(w), options);
      return `${report.deliveries} sent, ${report.failed.length} failed`;
    }
  }
}

/** The events queue's retention (4 days) and the dead-letter queues' (14, counted from the first enqueue). */
const EVENTS_RETENTION_HOURS = 4 * 24;
const DEAD_LETTER_RETENTION_HOURS = 14 * 24;

/**
 * Before the clock jumps `hours`: what SQS would not keep that long is dealt with as a deployment
 * does, so that no message outlives its queue (fauxqs keeps them on the wall clock, the model's
 * jumps weeks): past the dead letters' retention the operator redrives them first (`redrive`'s
 * window); past the events queue's the projector drains it (Lambda polls as time passes). A fact
 * projected weeks after its erasure is otherwise one SQS had dropped (and the erasure's mark, 30
 * days, lapsed: docs/personal-data.md).
 */
export async function beforeTimePasses(w: Wiring, hours: number): Promise<string> {
  if (hours < EVENTS_RETENTION_HOURS) return "";
  const moved =
    hours >= DEAD_LETTER_RETENTION_HOURS
      ? await redrive(w.clients.sqs, w.site.stream.deadLetterUrl, w.site.queueUrl)
      : 0;
  const drained = await drainEvents(w, 20);
  return ` (first ${moved ? `${moved} dead letter(s) redriven, ` : ""}${drained.handled} message(s) drained)`;
}

/** Runs `work` with a fault armed for this operation's clients only, disarmed after. */
async function withFault(w: Wiring, fault: "throttle" | "publish", work: () => Promise<string>) {
  w.site.stream.faults[fault] = w.actor;
  try {
    return await work();
  } finally {
    if (w.site.stream.faults[fault] === w.actor) delete w.site.stream.faults[fault];
  }
}

/**
 * The projector drains the events queue; with `again`, each batch is projected a second time
 * before its messages are deleted (Lambda's redelivery of a batch whose deletes were lost, at
 * least once), and the tables must be as the first projection left them (one state).
 */
async function drain(m: Model, w: Wiring, again: boolean): Promise<string> {
  let twice = 0;
  const afterBatch = async (records: SQSRecord[]) => {
    const before = await tablesOf(w);
    await projectSqsBatch({ Records: records }, undefined, projectorDeps(w), silent());
    const after = await tablesOf(w);
    twice += records.length;
    for (const [table, text] of before)
      if (after.get(table) !== text)
        m.violations.push(
          `projecting ${records.length} record(s) a second time changed the ${table} table: ${firstDifference(text, after.get(table) ?? "")}`,
        );
  };
  const drained = await drainEvents(w, 4, again ? afterBatch : undefined);
  return `${drained.handled} handled, ${drained.failed} failed${again ? `, ${twice} projected twice` : ""}`;
}

/** Each projection table's items, canonical (read outside the gate: a check, not a writer's request). */
async function tablesOf(w: Wiring): Promise<Map<string, string>> {
  const { items } = await readSnapshot(w.site, { objects: false });
  return new Map(
    Object.entries(items)
      .filter(([table]) => table !== "activity")
      .map(([table, list]) => [
        table,
        list
          .map((i) => canonicalJson(i))
          .sort()
          .join("\n"),
      ]),
  );
}

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `…${a.slice(Math.max(0, i - 60), i + 80)}… -> …${b.slice(Math.max(0, i - 60), i + 80)}…`;
}
