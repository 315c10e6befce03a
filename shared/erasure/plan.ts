import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { LeaseWait } from "../adapters/archive-lease";
import type { ArchiveCompactor } from "../analytics/compaction";
import type { SqlEngine } from "../analytics/engines/sql-engine";
import type { RollupDependencies } from "../analytics/rollup";
import { S3_PREFIX } from "../platform/constants";
import type { TableNames } from "../platform/tables";
import type { ErasedSubjects } from "./erased-subjects";
import type { ErasureCounts, ErasureRecord, ErasureTable } from "./erasure-state";
import type { ObjectVersions } from "./object-versions";

/**
 * The erasure's vocabulary, shared by its steps (`forget.ts` runs them: find, plan, rewrite
 * objects, rewrite items, recompute): what it is given, what it is asked, what it finds and what
 * it reports.
 */

/** What an erasure reads and changes: the deployment's bucket, tables, engine and queues. */
export interface ForgetDependencies {
  s3: S3Client;
  bucket: string;
  /**
   * SQL over the archive's NDJSON with Athena's `"$path"` column: DuckDB with `objectPaths`
   * locally, Athena's `archive_events`/`archive_edges` tables deployed.
   */
  search: SqlEngine;
  /** The bucket's old versions: `s3ObjectVersions` deployed, `UNVERSIONED` locally. */
  versions: ObjectVersions;
  doc: DynamoDBDocumentClient;
  tables: TableNames;
  /** The activity table: the lock, the erasure under way, the records. */
  state: ErasureTable;
  /**
   * How the erasure waits for the archive lease when another holds it (`COMMAND_LEASE_WAIT`: the
   * `forget` command, which must not fail because the schedule's pass holds it for seconds).
   * None: refused at once (`ArchiveLockedError`).
   */
  leaseWait?: LeaseWait;
  /** Recomputes the days the erasure touched (their top lists then show the pseudonym). */
  rollup: RollupDependencies;
  /** Rewrites a compacted day's Parquet from its redacted NDJSON. None: compacted days are left (reported). */
  compactor?: ArchiveCompactor;
  /**
   * The queues whose messages an erasure cannot change: counted in the report; but those whose
   * messages are redacted with the marks before anything is sent from them (`projected`: the events
   * queue and its dead letters once redriven, by the projector; the stream's unpublished queue, by
   * `redrive --stream`) when the user is marked (`erased`).
   */
  queues?: { sqs: SQSClient; urls: Record<string, string>; projected?: readonly string[] };
  now: () => number;
  /** Random ids (erasure id, pseudonym). @default 16 random hex digits */
  newId?: () => string;
  /** The id of an import batch's new key when an old-form key is moved. @default `newImportBatchId` (32 random hex digits) */
  newImportBatchId?: () => string;
  /** The most archive bytes one search query reads. @default SEARCH_CHUNK_BYTES */
  searchChunkBytes?: number;
  /**
   * The erased subjects the projector reads (#50, `erased-subjects.ts`): one user's erasure marks
   * its subject before its search (every delivery naming them is redacted in flight from then on)
   * and, at its end, with its end (those received before it stay redacted, for `ERASED_MARK_DAYS`).
   * `settleMs`: how long after the mark every projector redacts (its cache of the apps table and
   * its longest batch), which the erasure waits out before its last look at what the projector
   * wrote. None: a delivery in flight is projected as received (a second run erases it).
   */
  erased?: { subjects: ErasedSubjects; settleMs: number };
  /** Waits (the settle above). @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Called before each change, and between the search's queries and reads (a test's kill point: a
   * throw there is a crash); under the lease, `forget` renews the lease there first.
   */
  checkpoint?: (step: string) => void | Promise<void>;
  /**
   * Called once the erasure record is written (the stream publishes the erasure notice to the
   * team's consumers): a failure there fails the run, and a re-run completes it (the record is
   * written again, the same). Not called by a dry run.
   */
  onErased?: (notice: ErasureNotice) => Promise<void>;
}

/** What an ended erasure tells those who keep copies (`onErased`): no uid, name or text. */
export interface ErasureNotice {
  appId: string;
  erasureId: string;
  pseudonym?: string;
  /** One user: `erasureSubject(appId, uid)`, which a holder of the uid can match, and no one else. */
  subject?: string;
  scope: "user" | "app";
  /** The days whose archived lines the erasure redacted or removed (a replay of them publishes what stands now). */
  days: string[];
  finishedAt: number;
}

export interface ForgetRequest {
  appId: string;
  /** The user to erase; absent: the whole app. */
  uid?: string;
  /** Find and report, change nothing. */
  dryRun?: boolean;
  keepRecordings?: boolean;
  /** Who asked (the operator): kept in the record. */
  requestedBy: string;
}

/** A table item the erasure changes, and how (`itemErasure`): what the dry run counts. */
export interface PlannedItem {
  table: keyof TableNames;
  key: Record<string, string>;
  action: "delete" | "redact";
}

/**
 * What an erasure found: persisted before the first change (without `items`, whose keys hold the
 * uid: a re-run finds them again from the groups and sessions named here), so that a re-run after
 * a crash resumes it. No uid, name or text.
 */
export interface ErasurePlan {
  /** Archive, quarantine, oversize, day-set and old-layout objects holding the user (or app). */
  objects: string[];
  /**
   * Days whose figures the erasure recomputes from the archive (event days, receipt days and edge
   * days of the lines, and stored days whose top lists name the user) that still have their raw
   * archive: a day without one would be recomputed from nothing.
   */
  days: string[];
  /** Stored days whose top lists name the user and whose raw archive has expired: their lists are rewritten in place. */
  topListDays: string[];
  /** Receipt days with a compaction: their Parquet is rewritten. */
  compactDays: string[];
  /** Days whose rollup ledger pass holds the app's totals (a whole app): the app is removed from them. */
  ledgerDays: string[];
  /** Table items to delete or redact, by table and key (not persisted: found again on a re-run). */
  items: PlannedItem[];
  /** The groups the user's lines name: where the tables hold them besides their own items. */
  groups: string[];
  /**
   * The sessions their uid ties to them (they initiated or received it, or a line naming their uid
   * names it): the only ones in which an occupant bearing one of their names is renamed, and whose
   * items and recordings the erasure changes (a session their name alone is in may be a namesake's).
   */
  sessions: string[];
  /** Recording objects of the sessions tied to the user. */
  recordings: string[];
  bytesScanned: number;
}

export interface ForgetReport extends Omit<ErasureRecord, "finishedAt"> {
  dryRun: boolean;
  /**
   * A dry run with no erasure under way: its id and pseudonym are drawn for it alone, and the
   * erasure draws its own (random, never derived from the uid). Absent when they are the ones the
   * run uses (an erasure under way, resumed).
   */
  drawnForDryRun?: true;
  finishedAt?: number;
  plan: ErasurePlan;
}

/** `erasures/<erasureId>/plan.json`: the plan, no personal data (keys, days, counts). */
export function erasurePlanKey(erasureId: string): string {
  return `${S3_PREFIX.erasures}${erasureId}/plan.json`;
}

/** Every count at zero: where a run (or a dry run) starts counting. */
export const zeroCounts = (): ErasureCounts => ({
  objectsSearched: 0,
  objectsRewritten: 0,
  objectsDeleted: 0,
  linesRedacted: 0,
  linesRemoved: 0,
  versionsDeleted: 0,
  itemsDeleted: 0,
  itemsRedacted: 0,
  recordingsDeleted: 0,
  recordingsKept: 0,
  daysRecompacted: 0,
  daysRecomputed: 0,
  topListsRewritten: 0,
  ledgerPassesRewritten: 0,
  bytesScanned: 0,
});
