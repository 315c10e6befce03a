import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { ReconcileFact } from "@webhook-backend/stream";
import { appSegment, RAW_ARCHIVE_SUFFIX, utcDay } from "../contracts/bucket-layout";
import { S3_PREFIX } from "../platform/constants";
import type { BlobStore } from "../ports/blob-store";
import type { MessageQueue } from "../ports/message-queue";
import { archiveLine } from "../projector/raw-archive";
import type { ReconcileFactRecord, ReconcileFactSink } from "../reconcile/fact-sink";
import { type AcceptedDelivery, factEnvelope } from "./envelope";
import { publishableMessage, unpublishedMessage } from "./projector-stream";
import type { StreamPublisher } from "./publish-batches";

/**
 * Reconcile's changes on their way to the stream (#57 item 4, docs/stream.md "Reconcile facts"),
 * the stream's side of reconcile's port (`shared/reconcile/fact-sink.ts`, as the projector's
 * `fact-stream.ts`):
 * each fact a reconcile run applied and that changed an item is archived under `reconcile/`
 * (the raw archive's line format, outside `raw/`: no activity figure, ledger or watchdog counts it
 * as a delivery) and, while something listens, published as a `kind: "reconcile"` message (its
 * `trigger` attribute `user_connection_status_changed`, `kind` attribute `reconcile`: a
 * subscriber filters on either). A publish that fails goes to the stream's unpublished queue, which
 * `redrive --stream` publishes. The archive is what `replay --to-stream`/`--to-subscriber` send
 * again and what `forget` redacts: the listing carries names and avatars.
 */

/**
 * `reconcile/app=<app>/date=<day>/<hash of the facts' ids>.ndjson.gz`: one object per app and run
 * (a re-run of the same facts rewrites the same key).
 *
 * @example reconcileArchiveKey("app1", facts) // "reconcile/app=app1/date=2026-11-29/3f9c….ndjson.gz"
 */
export function reconcileArchiveKey(appId: string, facts: readonly ReconcileFactRecord[]): string {
  const ids = facts.map((f) => `${f.eventId}@${f.receivedAt}`).sort();
  const day = utcDay(Math.min(...facts.map((f) => f.receivedAt)));
  const hash = createHash("sha256").update(ids.join("\n")).digest("hex").slice(0, 32);
  return `${S3_PREFIX.reconcile}app=${appSegment(appId)}/date=${day}/${hash}${RAW_ARCHIVE_SUFFIX}`;
}

/**
 * The envelope of a fact reconcile applied (`kind: "reconcile"`).
 *
 * @example reconcileEnvelope(fact).id // "<eventId>@<fetchedAt>"
 */
export function reconcileEnvelope(fact: AcceptedDelivery): ReconcileFact {
  return factEnvelope("reconcile", fact) as ReconcileFact;
}

export interface ReconcileFactSinkOptions {
  /** The data bucket: the archive (`reconcile/`), and a body past SNS's limit (never, in practice). */
  dataStore: BlobStore;
  /** The stream, when the deployment has one: whether something listens, the topic, its unpublished queue. */
  stream?: {
    isOn(): Promise<boolean>;
    publisher: StreamPublisher;
    unpublished: MessageQueue;
  };
}

/**
 * A `ReconcileFactSink` over the data bucket and the stream: the archive first (a fact published
 * and not archived would be lost to a replay), then the publish; each fact whose publish failed
 * is kept in the unpublished queue. Throws when the archive or the unpublished queue cannot take
 * a fact (the run reports the app as failed: its table is written, the next run's listing is
 * compared afresh).
 *
 * @example await reconcileFactSink({ dataStore, stream }).record("app1", facts) // { published: 2, unpublished: 0 }
 */
export function reconcileFactSink(options: ReconcileFactSinkOptions): ReconcileFactSink {
  return {
    async record(appId, facts) {
      if (facts.length === 0) return { published: 0, unpublished: 0 };
      const lines = facts.map((f) => JSON.stringify(archiveLine({ ...f, messageId: "" })));
      await options.dataStore.put(reconcileArchiveKey(appId, facts), gzipSync(`${lines.join("\n")}\n`), {
        contentType: "application/gzip",
      });
      const { stream } = options;
      if (!stream || !(await stream.isOn())) return { published: 0, unpublished: 0 };
      const messages = await Promise.all(
        facts.map(async (f) => {
          const envelope = reconcileEnvelope(f);
          return { envelope, message: await publishableMessage(envelope, f, options.dataStore) };
        }),
      );
      const { failed } = await stream.publisher.publish(messages.map((m) => m.message));
      const kept = messages.filter((m) => failed.has(m.message.id));
      for (const { message, envelope } of kept)
        await stream.unpublished.send(unpublishedMessage(message, envelope));
      return { published: messages.length - kept.length, unpublished: kept.length };
    },
  };
}
