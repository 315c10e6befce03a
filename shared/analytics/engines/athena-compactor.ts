import { randomUUID } from "node:crypto";
import {
  GetQueryExecutionCommand,
  type QueryExecution,
  StopQueryExecutionCommand,
} from "@aws-sdk/client-athena";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import * as z from "zod/mini";
import { listObjects } from "../../adapters/s3-listing";
import { getObjectIfPresent } from "../../adapters/s3-object-if-present";
import { parseJsonContract } from "../../contracts/queue-messages";
import { CompactionPendingError, SqlQueryError } from "../../platform/errors";
import {
  type ArchiveCompactor,
  type CompactionManifest,
  compactDayPrefix,
  compactionSources,
  compactManifestKey,
  parseCompactionManifest,
  sourcesHash,
} from "../compaction";
import { athenaLiteral, compactionSelect } from "../dialect";
import { type AthenaEngineOptions, awaitQuery, hasEnded, queryError, startQuery } from "./athena-sql-engine";

export interface AthenaCompactorOptions
  extends Pick<AthenaEngineOptions, "client" | "workGroup" | "database" | "deadline" | "sleep" | "pollMs"> {
  s3: S3Client;
  bucket: string;
  /** The clock of `compactedAt` and of the deadline. @default Date.now */
  now?: () => number;
  /** Parquet files a day is bucketed into by app (Athena prunes to one for `app = …`). @default 16 */
  buckets?: number;
  /** A fresh nonce for a new attempt's idempotency token (tests pass a fixed one). @default randomUUID */
  newNonce?: () => string;
}

/**
 * The CTAS of one set of sources, as a day's compaction keeps track of it beside its folder
 * (`compact/date=<day>/<hash>.ctas.json`, outside the folder: CTAS wants the folder empty): the
 * attempt, the nonce of its idempotency token, and, once started, its query id.
 */
const ctasMarkerSchema = z.object({
  attempt: z.number(),
  nonce: z.string(),
  queryId: z.optional(z.string()),
});
type CtasMarker = z.infer<typeof ctasMarkerSchema>;

/** `s3://bucket/key` as its parts. */
function s3Location(uri: string): { bucket: string; key: string } {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri.trim().replace(/^"|"$/g, ""));
  if (!match) throw new SqlQueryError(`not an S3 location: ${uri}`, false);
  return { bucket: match[1] as string, key: match[2] as string };
}

/**
 * A day's compaction on a deployed stack, by Athena itself (CTAS): the receipt day's NDJSON
 * objects are listed first (the manifest's sources), then `CREATE TABLE … WITH (format = PARQUET,
 * write_compression = ZSTD, bucketed_by = ARRAY['app'], bucket_count = 16, external_location =
 * 'compact/date=<day>/<hash of the sources>/') AS <compactionSelect>` writes the Parquet (each
 * bucket one app range, sorted by app and event time), the table is dropped (its files stay: an
 * external table), and the manifest is written last. Billed as the day's NDJSON bytes scanned
 * ($5 a TB: ~$0.0005 for a day of 1M events); no native binary to ship in a Lambda. An object
 * archived between the listing and the statement is in the Parquet and read again beside it: a
 * duplicate line, which every figure deduplicates by natural key, never a lost one.
 *
 * A folder is never taken for a finished compaction (#40): a CTAS stopped at the deadline, or one
 * left running by a Lambda killed first, leaves part of its files there. So each attempt is
 * tracked beside the folder (`ctasMarkerSchema`: written before the start, its query id after),
 * and the compactor adopts exactly the files of the data manifest (`<query-id>-manifest.csv`,
 * Athena's list of what the query wrote) of a query whose state is SUCCEEDED, deleting anything
 * else in the folder; a query still running is left to run and adopted by a later call
 * (`CompactionPendingError`: the schedule defers the day); a failed or cancelled one has its
 * folder and its Glue table removed before the next attempt starts (CTAS refuses a folder that
 * holds files). The start carries an idempotency token (`<hash>-<nonce>`), so a caller that died
 * between the start and keeping the id finds the same query again instead of starting a second.
 * A rewrite of the day's objects (an erasure, a repair) first ends a CTAS left running
 * (`stopDay`: stopped, awaited, its table dropped) before it drops the day's compaction, so that
 * a query that read the objects before the rewrite is never adopted after it.
 *
 * @example await athenaCompactor({ client, workGroup, database, s3, bucket }).compactDay("2026-01-02")
 * @throws CompactionPendingError while the day's CTAS runs; SqlQueryError when it failed (cleaned: the next call starts anew)
 */
export function athenaCompactor(options: AthenaCompactorOptions): ArchiveCompactor {
  const now = options.now ?? Date.now;
  const newNonce = options.newNonce ?? randomUUID;
  const { s3, bucket } = options;
  const athena: AthenaEngineOptions = { ...options, now };
  const getText = async (at: { bucket: string; key: string }) => {
    const out = await s3.send(new GetObjectCommand({ Bucket: at.bucket, Key: at.key }));
    return (await out.Body?.transformToString()) ?? "";
  };
  const put = (key: string, body: string) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: "application/json" }));
  const remove = (key: string) => s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  /**
   * A recorded query as it is now (polled until it ends or the deadline), or as failed when Athena
   * no longer knows it (its history lasts 45 days): then cleaned and started anew.
   */
  const lastExecution = (queryId: string): Promise<QueryExecution> =>
    awaitQuery(athena, queryId).catch((error: unknown) => {
      if (!(error instanceof Error) || error.name !== "InvalidRequestException") throw error;
      return { QueryExecutionId: queryId, Status: { State: "FAILED", StateChangeReason: error.message } };
    });
  /** Runs a statement to its end; throws its failure. */
  const statement = async (sql: string) => {
    const execution = await awaitQuery(athena, await startQuery(athena, sql));
    if (execution.Status?.State !== "SUCCEEDED") throw queryError(execution);
  };
  return {
    async stopDay(day) {
      for (const { key } of await listObjects(s3, bucket, compactDayPrefix(day))) {
        const hash = CTAS_MARKER.exec(key)?.[1];
        const queryId = hash && (await readMarker(s3, bucket, key))?.queryId;
        if (!hash || !queryId) continue;
        const { QueryExecution: execution = {} } = await options.client
          .send(new GetQueryExecutionCommand({ QueryExecutionId: queryId }))
          .catch((error: unknown) => {
            // Athena no longer knows it (its history lasts 45 days): long ended.
            if (error instanceof Error && error.name === "InvalidRequestException")
              return { QueryExecution: { Status: { State: "FAILED" as const } } };
            throw error;
          });
        if (hasEnded(execution)) continue;
        await options.client.send(new StopQueryExecutionCommand({ QueryExecutionId: queryId }));
        if (!hasEnded(await awaitQuery(athena, queryId))) throw new CompactionPendingError(day, queryId);
        // A CTAS stopped may leave its table: the next attempt's CREATE would find it.
        await statement(`DROP TABLE IF EXISTS ${ctasTable(day, hash)}`);
      }
    },
    async compactDay(day) {
      const sources = await compactionSources(s3, bucket, day);
      const hash = sourcesHash(sources);
      const prefix = `${compactDayPrefix(day)}${hash}/`;
      const markerKey = `${compactDayPrefix(day)}${hash}.ctas.json`;
      const table = ctasTable(day, hash);
      const ctas = `CREATE TABLE ${table} WITH (format = 'PARQUET', write_compression = 'ZSTD', bucketed_by = ARRAY['app'],
            bucket_count = ${options.buckets ?? 16}, external_location = ${athenaLiteral(`s3://${bucket}/${prefix}`)}) AS ${compactionSelect(day)}`;

      /**
       * The folder emptied (the manifest first when it names the folder: readers then take the
       * NDJSON), and the table a failed CTAS may have left dropped (`dropTable`, or files found).
       */
      const clean = async (dropTable: boolean) => {
        const current = await readManifest(day);
        if (current?.parquet.some((k) => k.startsWith(prefix))) await remove(compactManifestKey(day));
        const left = await listObjects(s3, bucket, prefix);
        for (const { key } of left) await remove(key);
        if (dropTable || left.length) await statement(`DROP TABLE IF EXISTS ${table}`);
      };
      const readManifest = async (d: string) => {
        const text = await textIfPresent(s3, bucket, compactManifestKey(d));
        return text === undefined ? undefined : parseCompactionManifest(text, compactManifestKey(d));
      };
      const fresh = async (attempt: number): Promise<CtasMarker> => {
        const marker = { attempt, nonce: newNonce() };
        await put(markerKey, JSON.stringify(marker));
        return marker;
      };

      let marker = await readMarker(s3, bucket, markerKey);
      // Adopted already (a re-run after a crash before the ledger noted it): nothing to do. A
      // manifest of the same sources with no attempt recorded is not trusted (an earlier version
      // adopted any folder): compacted again.
      const current = await readManifest(day);
      if (
        marker?.queryId &&
        current &&
        sourcesHash(current.sources) === hash &&
        current.parquet.every((k) => k.startsWith(prefix))
      )
        return current;
      let execution = marker?.queryId ? await lastExecution(marker.queryId) : undefined;
      if (marker?.queryId && execution && !hasEnded(execution))
        throw new CompactionPendingError(day, marker.queryId);
      if (execution?.Status?.State !== "SUCCEEDED") {
        // No attempt yet (the folder may hold another writer's files), or the last one failed:
        // its folder and table go before a new attempt. An attempt without its id may have started
        // (its caller died before keeping it): the same token finds it.
        if (!marker || execution) {
          await clean(execution !== undefined);
          marker = await fresh(marker ? marker.attempt + 1 : 0);
        }
        const queryId = await startQuery(athena, ctas, { token: `${hash}-${marker.nonce}` });
        marker = { ...marker, queryId };
        await put(markerKey, JSON.stringify(marker));
        execution = await awaitQuery(athena, queryId);
        if (!hasEnded(execution)) throw new CompactionPendingError(day, queryId);
        if (execution.Status?.State !== "SUCCEEDED") {
          await clean(true);
          await fresh(marker.attempt + 1);
          throw queryError(execution);
        }
      }
      const files = await adoptedFiles(execution, marker?.queryId ?? "", prefix);
      await statement(`DROP TABLE IF EXISTS ${table}`);
      const manifest: CompactionManifest = {
        day,
        parquet: files.map((f) => f.key).sort(),
        sources,
        rows: -1,
        bytes: files.reduce((sum, f) => sum + f.size, 0),
        compactedAt: now(),
      };
      const bytesScanned = execution.Statistics?.DataScannedInBytes ?? 0;
      await put(
        compactManifestKey(day),
        JSON.stringify({ ...manifest, bytesScanned, queryId: marker?.queryId }),
      );
      // Earlier compactions of the day (other sources): no longer named, removed.
      for (const { key } of await listObjects(s3, bucket, compactDayPrefix(day)))
        if (!key.startsWith(prefix) && key !== markerKey && key !== compactManifestKey(day))
          await remove(key);
      return manifest;
    },
  };

  /**
   * The files a SUCCEEDED CTAS wrote, as its data manifest lists them, each checked to be in its
   * folder; anything else in the folder is deleted, so that a reader of the folder takes exactly
   * the query's files.
   */
  async function adoptedFiles(
    execution: QueryExecution,
    queryId: string,
    prefix: string,
  ): Promise<Array<{ key: string; size: number }>> {
    const location = execution.Statistics?.DataManifestLocation;
    if (!location)
      throw new SqlQueryError(`Athena query ${queryId} names no data manifest: not adopted`, false);
    const listed = (await getText(s3Location(location)))
      .split("\n")
      .filter((line) => line.trim())
      .map(s3Location);
    const outside = listed.find((l) => l.bucket !== bucket || !l.key.startsWith(prefix));
    if (outside)
      throw new SqlQueryError(
        `Athena query ${queryId} wrote s3://${outside.bucket}/${outside.key}, outside ${prefix}: not adopted`,
        false,
      );
    const inFolder = new Map((await listObjects(s3, bucket, prefix)).map((o) => [o.key, o.size]));
    const wanted = new Set(listed.map((l) => l.key));
    const missing = [...wanted].filter((k) => !inFolder.has(k));
    if (missing.length)
      throw new SqlQueryError(
        `Athena query ${queryId} lists ${missing.length} file(s) its folder lacks (${missing[0]}): not adopted`,
        false,
      );
    for (const key of inFolder.keys())
      if (!wanted.has(key)) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    return [...wanted].map((key) => ({ key, size: inFolder.get(key) ?? 0 }));
  }
}

/** `compact/date=<day>/<hash>.ctas.json`: a CTAS's marker, the hash of its sources. */
const CTAS_MARKER = /\/([0-9a-f]{32})\.ctas\.json$/;

/** The Glue table a day's CTAS of the sources `hash` creates (dropped once its files are adopted). */
const ctasTable = (day: string, hash: string) => `compact_${day.replaceAll("-", "_")}_${hash.slice(0, 8)}`;

/** An object's text, or undefined where there is none (`getObjectIfPresent`). */
async function textIfPresent(s3: S3Client, bucket: string, key: string): Promise<string | undefined> {
  const bytes = await getObjectIfPresent(s3, bucket, key);
  return bytes && new TextDecoder().decode(bytes);
}

/** A CTAS marker, or undefined where there is none. */
async function readMarker(s3: S3Client, bucket: string, key: string): Promise<CtasMarker | undefined> {
  const text = await textIfPresent(s3, bucket, key);
  return text === undefined ? undefined : parseJsonContract(ctasMarkerSchema, text, key);
}
