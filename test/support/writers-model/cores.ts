import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import type { SQSRecord } from "aws-lambda";
import {
  type ArchiveLease,
  archiveLease,
  COMMAND_LEASE_WAIT,
  type LeaseWait,
} from "../../../shared/adapters/archive-lease";
import { s3BlobStore } from "../../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../../shared/adapters/sqs-message-queue";
import { archiveExpirySweep } from "../../../shared/analytics/archive-expiry";
import type { ArchiveCompactor } from "../../../shared/analytics/compaction";
import { athenaCompactor } from "../../../shared/analytics/engines/athena-compactor";
import { duckDbCompactor } from "../../../shared/analytics/engines/duckdb-compactor";
import { duckDbEngine } from "../../../shared/analytics/engines/duckdb-sql-engine";
import type { SqlEngine } from "../../../shared/analytics/engines/sql-engine";
import type { RollupDependencies } from "../../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../../shared/analytics/store/dynamo-activity-store";
import { blobRollupLedger } from "../../../shared/analytics/store/rollup-ledger";
import { s3UserSets } from "../../../shared/analytics/user-sets";
import type { ForgetDependencies } from "../../../shared/erasure/forget";
import { UNVERSIONED } from "../../../shared/erasure/object-versions";
import { type IngestDependencies, ingestWebhook } from "../../../shared/ingest/core";
import { basicAuthorization } from "../../../shared/ingest/credentials";
import { secretCredentialSource } from "../../../shared/ingest/secret-credentials";
import { type BatchDependencies, projectSqsBatch } from "../../../shared/projector/batch";
import { projectionStores } from "../../../shared/projector/stores";
import { recordFromMessage } from "../../../tools/local/sqs-event";
import type { Actor, RequestGate } from "./gate";
import { forgetStreamParts, projectorStreamParts } from "./stream";
import type { ActorClients, Site } from "./world";

/*
 * The commands' real cores as the writers model wires them (issue #50): each over one operation's
 * gated clients, its engine's queries and compactions steps of the gate too, its clock the run's,
 * its waits steps that let the clock move. What each wires is what the command's entry file wires
 * (tools/commands/*.ts), with the injected clock and ids in place of Date.now and randomBytes.
 */

/** The grace after a day's end before its pass is final (the schedule's default is 2 h). */
export const GRACE_MS = 2 * 3_600_000;
/** The archive kept (`retainArchiveDays`) in the model: the retention sweep's window. */
export const RETAIN_DAYS = 30;

/** One operation's view of the run: the site, the gate, its actor and its clients. */
export interface Wiring {
  site: Site;
  gate: RequestGate;
  actor: Actor;
  clients: ActorClients;
}

/** An engine whose every query is one step of the actor (its S3 reads are steps of their own). */
export function gatedEngine(w: Wiring, engine: SqlEngine): SqlEngine {
  return { name: engine.name, query: (...args) => w.gate.busy(w.actor, "sql", () => engine.query(...args)) };
}

/**
 * The compactor over the actor's clients: Athena's CTAS when the world has Athena (its polls
 * steps on the run's clock), else DuckDB's, each compaction a step.
 */
export function gatedCompactor(w: Wiring): ArchiveCompactor {
  const { athena } = w.site;
  if (athena)
    return athenaCompactor({
      client: athena.client(w.gate, w.actor),
      workGroup: "wg",
      database: "db",
      s3: w.clients.s3,
      bucket: w.site.bucket,
      now: () => w.site.clock.now,
      // The model's clock jumps (a lapse, a lease's waits): a Lambda's deadline would pass on them.
      deadline: w.site.clock.now + 86_400_000,
      sleep: async (ms) => {
        await w.gate.pause(w.actor, "athena poll");
        w.site.clock.now += ms;
      },
      newNonce: w.site.newId,
    });
  const inner = duckDbCompactor({ s3: w.clients.s3, bucket: w.site.bucket, now: () => w.site.clock.now });
  return { compactDay: (day) => w.gate.busy(w.actor, `compact ${day}`, () => inner.compactDay(day)) };
}

/**
 * A command's wait for the lease (`COMMAND_LEASE_WAIT`), each retry a step after which the clock
 * has moved on by the retry's interval: a holder that crashed keeps it until the clock passes its
 * lapse, and a waiter gives up after 5 minutes of the run's clock.
 */
export function commandWait(w: Wiring): LeaseWait {
  return {
    ...COMMAND_LEASE_WAIT,
    sleep: async (ms) => {
      await w.gate.pause(w.actor, "lease wait");
      w.site.clock.now += ms;
    },
  };
}

/** The archive lease as a command takes it (waiting), or as the schedule does (`wait: false`). */
export function leaseOf(w: Wiring, wait = true): ArchiveLease {
  return archiveLease(
    { doc: w.clients.doc, tableName: w.site.activityTable },
    () => w.site.clock.now,
    wait ? commandWait(w) : undefined,
  );
}

/** The rollup's dependencies (the `rollup` command's, with the schedule's ledger, compactor and sweep when `scheduled`). */
export function rollupDeps(w: Wiring, scheduled = false): RollupDependencies {
  const { s3, doc } = w.clients;
  const { bucket, activityTable } = w.site;
  return {
    engine: gatedEngine(w, duckDbEngine({ s3, bucket })),
    store: dynamoActivityStore(doc, activityTable),
    now: () => w.site.clock.now,
    graceMs: GRACE_MS,
    userSets: s3UserSets(s3, bucket),
    archiveLock: leaseOf(w, !scheduled),
    ...(scheduled
      ? {
          ledger: blobRollupLedger(s3BlobStore(s3, bucket)),
          compactor: gatedCompactor(w),
          expirySweep: archiveExpirySweep(s3, bucket, RETAIN_DAYS),
        }
      : {}),
  };
}

/** `forget`'s dependencies as the command wires them (DuckDB's search, the events queue counted, seeded ids). */
export function forgetDeps(w: Wiring): ForgetDependencies {
  const { s3, doc, sqs } = w.clients;
  const { bucket, tables, activityTable } = w.site;
  return {
    s3,
    bucket,
    search: gatedEngine(w, duckDbEngine({ s3, bucket, objectPaths: true })),
    versions: UNVERSIONED,
    doc,
    tables,
    state: { doc, tableName: activityTable },
    leaseWait: commandWait(w),
    rollup: rollupDeps(w),
    compactor: gatedCompactor(w),
    queues: {
      sqs,
      urls: {
        "events queue": w.site.queueUrl,
        "events dead-letter queue": w.site.stream.deadLetterUrl,
        "stream unpublished queue": w.site.stream.unpublishedUrl,
      },
      projected: ["events queue", "events dead-letter queue", "stream unpublished queue"],
    },
    now: () => w.site.clock.now,
    newId: w.site.newId,
    ...forgetStreamParts(streamWiring(w)),
  };
}

/** What the stream's wiring (`stream.ts`) takes of an operation's. */
export const streamWiring = (w: Wiring) => ({
  stream: w.site.stream,
  bucket: w.site.bucket,
  appsTable: w.site.appsTable,
  clock: w.site.clock,
  gate: w.gate,
  actor: w.actor,
  clients: w.clients,
});

/**
 * The projector's dependencies over the actor's clients (no recording jobs: the model has no
 * recordings), with the in-flight redaction and the stream as functions/projector/handler.ts
 * wires them (`stream.ts`).
 */
export function projectorDeps(w: Wiring): BatchDependencies {
  const { dynamo, s3 } = w.clients;
  return {
    stores: projectionStores(dynamo, w.site.tables),
    dataStore: s3BlobStore(s3, w.site.bucket),
    recordingJobs: { send: async () => undefined },
    now: () => w.site.clock.now,
    ...projectorStreamParts(streamWiring(w)),
  };
}

/** The ingest's dependencies: the credentials secret read through the actor's client (no cache to speak of). */
export function ingestDeps(w: Wiring): IngestDependencies {
  return {
    credentials: secretCredentialSource({
      secretId: w.site.secretId,
      maxAgeSeconds: 0,
      minRefreshIntervalMs: 0,
      client: w.clients.secrets,
      now: () => w.site.clock.now,
    }),
    queue: sqsMessageQueue(w.clients.sqs, w.site.queueUrl),
    oversizeStore: s3BlobStore(w.clients.s3, w.site.bucket),
    limits: { maxBodyBytes: 6_000_000, inlineBodyLimitBytes: 200_000, maxJsonDepth: 64 },
  };
}

/** The platform POSTs a body with a pair: the ingest core's answer (its status and event id). */
export async function post(
  w: Wiring,
  body: string,
  pair: { username: string; password: string },
): Promise<{ status: number; eventId?: string }> {
  const result = await ingestWebhook(
    {
      method: "POST",
      headers: { authorization: basicAuthorization(pair.username, pair.password) },
      body,
      isBase64Encoded: false,
      receivedAt: w.site.clock.now,
    },
    ingestDeps(w),
  );
  return { status: result.response.statusCode ?? 0, eventId: result.eventId };
}

/** The projector's logger and metrics, silent (the model reads the stores, not the logs). */
export const silent = () => ({
  logger: new Logger({ serviceName: "writers-model", logLevel: "SILENT" }),
  metrics: new Metrics({ namespace: "WritersModel", serviceName: "writers-model" }),
});

/**
 * The events queue drained through the projector's batch handler, as Lambda's event source
 * mapping calls it: batches of up to 10, the records it reports failed made visible again (the
 * next drain retries them; the receive past `maxReceiveCount` moves one to the DLQ). `afterBatch`
 * runs after each batch is projected, before its messages are deleted. Returns how many records
 * it handled and how many failed.
 */
export async function drainEvents(
  w: Wiring,
  rounds = 4,
  afterBatch?: (records: SQSRecord[]) => Promise<void>,
): Promise<{ handled: number; failed: number }> {
  const { sqs } = w.clients;
  let handled = 0;
  let failed = 0;
  for (let i = 0; i < rounds; i++) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: w.site.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ["All"],
        AttributeNames: ["All"],
      }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) break;
    for (const m of messages) if (m.ReceiptHandle) w.site.received.add(m.ReceiptHandle);
    const records = messages.map((m) =>
      recordFromMessage(m, "arn:aws:sqs:us-east-1:000000000000:events", "us-east-1"),
    );
    // A batch that throws (its archive not written) fails whole, as Lambda retries it.
    const failures = await projectSqsBatch({ Records: records }, undefined, projectorDeps(w), silent()).then(
      (response) => new Set((response.batchItemFailures ?? []).map((f) => f.itemIdentifier)),
      () => new Set(records.map((r) => r.messageId)),
    );
    if (failures.size === 0) await afterBatch?.(records);
    for (const m of messages) {
      const handle = { QueueUrl: w.site.queueUrl, ReceiptHandle: m.ReceiptHandle };
      if (failures.has(m.MessageId ?? "")) {
        failed++;
        await sqs.send(new ChangeMessageVisibilityCommand({ ...handle, VisibilityTimeout: 0 }));
      } else await sqs.send(new DeleteMessageCommand(handle));
      w.site.received.delete(m.ReceiptHandle ?? "");
    }
    handled += messages.length;
  }
  return { handled, failed };
}
