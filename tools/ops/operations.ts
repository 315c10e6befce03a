import type { S3Client } from "@aws-sdk/client-s3";
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { type ArchiveLease, withArchiveLease } from "../../shared/adapters/archive-lease";
import type { RawArchiveLine } from "../../shared/contracts/bucket-layout";
import { MESSAGE_ATTRIBUTE, messageGroupOf } from "../../shared/contracts/queue-messages";
import { parseEventBody, refusalOf } from "../../shared/events/parse-body";
import type { ProjectionOutcome } from "../../shared/platform/outcomes";
import type { BlobStore } from "../../shared/ports/blob-store";
import { type ProjectorDependencies, projectKnownEvent } from "../../shared/projector/core";
import { triggerFilter } from "../../shared/stream/subscribers";
import { scanArchive } from "./archive-scan";
import { dryRunStores } from "./dry-run";

/**
 * Moves every message of a dead-letter queue back to its queue, body and attributes intact, each
 * in its app's message group (the `appId` attribute both queues carry: fair queues, as the
 * ingest and the projector send). Works on any SQS API (AWS and the local emulator); returns how
 * many moved.
 *
 * @example await redrive(sqs, dlqUrl, queueUrl) // 3
 */
export async function redrive(sqs: SQSClient, deadLetterUrl: string, queueUrl: string): Promise<number> {
  let moved = 0;
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetterUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 60,
        MessageAttributeNames: ["All"],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return moved;
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({
          Id: String(i),
          MessageBody: m.Body ?? "",
          MessageAttributes: m.MessageAttributes,
          MessageGroupId: messageGroupOf(m.MessageAttributes?.[MESSAGE_ATTRIBUTE.appId]?.StringValue),
        })),
      }),
    );
    const ok = new Set((sent.Successful ?? []).map((s) => s.Id));
    const done = messages.filter((_, i) => ok.has(String(i)));
    if (done.length) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: deadLetterUrl,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
    moved += done.length;
    if (done.length < messages.length)
      throw new Error(`${messages.length - done.length} message(s) could not be sent back`);
  }
}

export interface ReplayOptions {
  /** One app, or all when undefined. */
  appId?: string;
  /** Dates (YYYY-MM-DD, the receipt date), inclusive. */
  from?: string;
  to?: string;
  /** Only these triggers: forms (`triggerFilter`: names, `group:*`, `group_member_*`). */
  triggers?: readonly string[];
  /**
   * Apply the lines an erasure redacted too (a rebuild into empty tables: what only those lines
   * carried, a group or a call of the erased user's, comes back, and with it their presence and
   * memberships under the pseudonym, which the erasure had deleted). Default: skipped, counted.
   */
  includeRedacted?: boolean;
  /** Predict each outcome (the projector's core over the items as they are), write nothing. */
  dryRun?: boolean;
  /**
   * Called after the range is read (`read`) and before each batch of projections (`batch`): under
   * the lease it renews it; a test runs another writer there.
   */
  checkpoint?: (step: "read" | "batch") => Promise<void>;
}

/** Events projected between two renewals of the archive lease (a renewal is a clock check, and a write every 5 minutes). */
const REPLAY_BATCH = 100;

export interface ReplayReport {
  /** Nothing was written: the outcomes are the ones the replay would have. */
  dryRun?: boolean;
  objects: number;
  /** Events replayed (each at its first receipt; the redacted ones not among them). */
  events: number;
  duplicates: number;
  /**
   * Events whose line an erasure redacted (`erasure` set), skipped: projected before the erasure,
   * which rewrote their items; applied again they would bring back, under the pseudonym, the
   * presence and memberships it deleted. With `includeRedacted`: 0 (they are among `events`).
   */
  redacted: number;
  outcomes: Record<ProjectionOutcome | "invalid", number>;
}

/**
 * Re-projects events from the raw archive (`raw/date=<day>/hour=<hh>/*.ndjson[.gz]`, lines of
 * `appId` alone when given; `scanArchive`) through the same
 * projector core, in receipt order, each event once at its first receipt (the archive holds a
 * platform retry again, with a later receipt time). The
 * projections are idempotent and order-independent, so replaying over the current tables leaves
 * them as they are, and replaying into empty tables rebuilds them. Recording jobs are not re-sent
 * (pass `deps.recordingJobs` that sends them to re-fetch). Invalid events stay quarantined. Lines
 * an erasure redacted are skipped and counted (`redacted`): the erasure rewrote their items.
 *
 * It reads the range first and projects it for minutes after: a rewriter of stored data, it holds
 * the archive lease throughout (`lease`, renewed every `REPLAY_BATCH` events), so that an erasure
 * never reports done while it re-applies the erased user's lines read before (the erasure waits
 * for it, or is refused). A dry run writes nothing and takes no lease.
 *
 * @example await replayArchive(s3, archive, deps, archiveLeaseFor(target), { appId: "app1", from: "2026-01-01" }) // { events: 120, outcomes: { projected: 3, stale: 117, … }, … }
 * @throws ArchiveLockedError, with nothing read or written, when another rewrite holds the lease (after the lease's wait)
 */
export async function replayArchive(
  s3: S3Client,
  archive: BlobStore,
  deps: ProjectorDependencies,
  lease: ArchiveLease,
  options: ReplayOptions = {},
): Promise<ReplayReport> {
  const { appId, from, to } = options;
  const holder = `replay ${appId ?? "(every app)"} ${from ?? "…"}..${to ?? "…"}`;
  if (options.dryRun) return replayLines(s3, archive, deps, options, async () => {});
  return withArchiveLease(lease, holder, deps.now, (renew) => replayLines(s3, archive, deps, options, renew));
}

/** `replayArchive`'s read and projection, `renew` called before each batch of projections. */
async function replayLines(
  s3: S3Client,
  archive: BlobStore,
  deps: ProjectorDependencies,
  options: ReplayOptions,
  renew: () => Promise<void>,
): Promise<ReplayReport> {
  const events = new Map<string, RawArchiveLine>();
  let lines = 0;
  const extent = await scanArchive(
    s3,
    archive.bucket,
    { appId: options.appId, from: options.from, to: options.to },
    "oldest",
    (entry) => {
      lines++;
      // A platform retry is archived again with a later receipt time: the first receipt is the
      // event's (it is the version the live projector used).
      const known = events.get(entry.eventId);
      if (!known || entry.receivedAt < known.receivedAt) events.set(entry.eventId, entry);
    },
  );
  await options.checkpoint?.("read");
  const ofTriggers = triggerFilter(options.triggers);
  const wanted = [...events.values()].filter((e) => ofTriggers(e.trigger));
  // A line an erasure redacted was projected before it, and the erasure rewrote its items: not
  // applied again over them (it would recreate the erased user's presence and memberships under
  // the pseudonym), unless asked for a rebuild.
  const ordered = wanted
    .filter((e) => options.includeRedacted || !e.erasure)
    .sort((a, b) => a.receivedAt - b.receivedAt || a.eventId.localeCompare(b.eventId));
  const outcomes: ReplayReport["outcomes"] = {
    projected: 0,
    stale: 0,
    "archived-only": 0,
    quarantined: 0,
    invalid: 0,
  };
  // A dry run is the same replay over stores that read the items and write nowhere, with no jobs sent.
  const run: ProjectorDependencies = options.dryRun
    ? { ...deps, stores: dryRunStores(deps.stores), recordingJobs: { send: async () => undefined } }
    : deps;
  for (const [i, entry] of ordered.entries()) {
    if (i % REPLAY_BATCH === 0) {
      await renew();
      await options.checkpoint?.("batch");
    }
    const parsed = parseEventBody(entry.body);
    if (parsed.kind === "invalid") outcomes.invalid++;
    else if (parsed.kind === "unknown") outcomes["archived-only"]++;
    // Refused as the live projector refuses it (the on-behalf-of membership bug): not applied.
    else if (refusalOf(parsed) !== undefined) outcomes.quarantined++;
    else outcomes[await projectKnownEvent(parsed.event, entry, run)]++;
  }
  return {
    objects: extent.objects,
    events: ordered.length,
    duplicates: lines - events.size,
    redacted: wanted.length - ordered.length,
    outcomes,
    ...(options.dryRun ? { dryRun: true } : {}),
  };
}
