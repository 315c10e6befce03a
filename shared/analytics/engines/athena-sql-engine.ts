import {
  type AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  type GetQueryResultsCommandOutput,
  type QueryExecution,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from "@aws-sdk/client-athena";
import type { S3Client } from "@aws-sdk/client-s3";
import { listObjects } from "../../adapters/s3-listing";
import { dayOfKey, isArchiveObjectKey } from "../../contracts/bucket-layout";
import { S3_PREFIX } from "../../platform/constants";
import { SqlQueryError } from "../../platform/errors";
import { compactDayPrefix, dayManifests, dayPrefixes, readPlan } from "../compaction";
import {
  type AthenaDaySource,
  athenaArchiveEvents,
  athenaLiteral,
  bindNamed,
  type SqlValue,
  withArchiveEvents,
} from "../dialect";
import type { ArchiveScope, SqlEngine } from "./sql-engine";

export interface AthenaEngineOptions {
  client: AthenaClient;
  /** The workgroup: its result location (encrypted) and bytes-scanned cutoff apply. */
  workGroup: string;
  /** The Glue database holding the `archive_events` table. */
  database: string;
  /** Waits between status polls (injected: tests pass one that does not wait). */
  sleep?: (ms: number) => Promise<void>;
  /** Poll interval, ms. @default 500 */
  pollMs?: number;
  /**
   * Epoch ms after which no query starts and a running one is stopped (a Lambda's remaining time
   * less a margin, so that the failure is counted before the timeout kills the invocation).
   * @default none
   */
  deadline?: number;
  /** The clock the deadline is read against. @default Date.now */
  now?: () => number;
  /**
   * The data bucket, to read the compaction manifests of a query's days (`scope`): a compacted day
   * is read from its Parquet and the objects archived after it (`athenaArchiveEvents`). Absent:
   * every day from its NDJSON.
   */
  archive?: { s3: S3Client; bucket: string };
}

const NUMERIC = new Set(["tinyint", "smallint", "integer", "bigint", "double", "float", "real", "decimal"]);

/**
 * Athena as the `SqlEngine` of a deployed stack: the same query text, parameters bound as
 * `ExecutionParameters` (SQL literals), run in the stack's workgroup, polled until it ends, the
 * results read page by page. A failed or cancelled query (a syntax error, the bytes-scanned
 * cutoff) is a `SqlQueryError` with Athena's reason; `bytesScanned` is Athena's
 * `DataScannedInBytes`, what it bills.
 *
 * @example await athenaEngine({ client: new AthenaClient({}), workGroup, database }).query(sql, params)
 */
export function athenaEngine(options: AthenaEngineOptions): SqlEngine {
  return {
    name: "athena",
    async query(sql, params = {}, scope = {}) {
      const source = options.archive && (await compactedSource(options.archive, options.database, scope));
      const bound = bindNamed(source ? withArchiveEvents(sql, source) : sql, params);
      const id = await startQuery(options, bound.text, { values: bound.values.map(athenaLiteral) });
      const execution = await awaitQuery(options, id);
      const state = execution.Status?.State;
      if (!hasEnded(execution)) {
        await options.client.send(new StopQueryExecutionCommand({ QueryExecutionId: id }));
        throw new SqlQueryError(
          `Athena query stopped at the deadline (still ${state ?? "queued"})`,
          false,
          "CANCELLED",
        );
      }
      if (state !== "SUCCEEDED") throw queryError(execution);
      // A DML statement's (SELECT's) first page starts with a row of column names; a utility
      // statement's (SHOW, DESCRIBE) does not.
      const header = execution.StatementType === "DML";
      const result = await readResults(options.client, id, header);
      return { ...result, bytesScanned: execution.Statistics?.DataScannedInBytes ?? 0 };
    },
  };
}

const pastDeadline = (options: AthenaEngineOptions) =>
  options.deadline !== undefined && (options.now ?? Date.now)() >= options.deadline;

/**
 * Starts one statement in the workgroup and returns its query id. With `token` (32 to 128
 * characters), Athena's idempotency: the same token and text start one query, and a second start
 * returns the first one's id (a caller that died before it kept the id finds it again).
 *
 * @example await startQuery(options, "DROP TABLE IF EXISTS compact_2026_01_02_ab12cd34") // "9f1c…"
 * @throws SqlQueryError when the deadline has passed (nothing started)
 */
export async function startQuery(
  options: AthenaEngineOptions,
  text: string,
  { values = [], token }: { values?: readonly string[]; token?: string } = {},
): Promise<string> {
  if (pastDeadline(options))
    throw new SqlQueryError("no time left before the deadline to start a query", false, "CANCELLED");
  const started = await options.client.send(
    new StartQueryExecutionCommand({
      QueryString: text,
      WorkGroup: options.workGroup,
      QueryExecutionContext: { Database: options.database },
      ...(values.length ? { ExecutionParameters: [...values] } : {}),
      ...(token ? { ClientRequestToken: token } : {}),
    }),
  );
  if (!started.QueryExecutionId) throw new SqlQueryError("Athena started no query", true);
  return started.QueryExecutionId;
}

/** Whether a query has ended: SUCCEEDED, FAILED or CANCELLED. @example hasEnded({ Status: { State: "RUNNING" } }) // false */
export function hasEnded(execution: QueryExecution): boolean {
  const state = execution.Status?.State;
  return state === "SUCCEEDED" || state === "FAILED" || state === "CANCELLED";
}

/**
 * Polls a query until it ends (`hasEnded`) or until the deadline, and returns its execution as
 * last seen: at the deadline still queued or running, and left so (the caller stops it, or comes
 * back to it later).
 *
 * @example (await awaitQuery(options, id)).Status?.State // "SUCCEEDED"
 */
export async function awaitQuery(options: AthenaEngineOptions, id: string): Promise<QueryExecution> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (;;) {
    const { QueryExecution: execution = {} } = await options.client.send(
      new GetQueryExecutionCommand({ QueryExecutionId: id }),
    );
    if (hasEnded(execution) || pastDeadline(options)) return execution;
    await sleep(options.pollMs ?? 500);
  }
}

/**
 * A failed or cancelled query as a `SqlQueryError` with Athena's reason (category 1, a system
 * error, is worth retrying).
 *
 * @example queryError({ Status: { State: "CANCELLED", StateChangeReason: "Bytes scanned limit" } }).message // "Athena query cancelled: Bytes scanned limit"
 */
export function queryError(execution: QueryExecution): SqlQueryError {
  const state = execution.Status?.State === "CANCELLED" ? "CANCELLED" : "FAILED";
  const reason = execution.Status?.StateChangeReason ?? state.toLowerCase();
  return new SqlQueryError(
    `Athena query ${state.toLowerCase()}: ${reason.split("\n")[0]}`,
    execution.Status?.AthenaError?.ErrorCategory === 1,
    state,
  );
}

/**
 * How Athena reads `archive_events` for a scope's days when some are compacted (their manifests
 * and the days' NDJSON objects, listed: one LIST and one GET a day), or undefined when none is
 * (or the scope has no bounded days: the NDJSON, the source of truth, then serves).
 */
async function compactedSource(
  archive: { s3: S3Client; bucket: string },
  database: string,
  scope: ArchiveScope,
): Promise<string | undefined> {
  if (!scope.from || !scope.to) return undefined;
  const manifests = await dayManifests(archive.s3, archive.bucket, scope);
  if (manifests.size === 0) return undefined;
  const days: AthenaDaySource[] = [];
  for (const prefix of dayPrefixes(S3_PREFIX.raw, scope)) {
    const day = dayOfKey(prefix) ?? "";
    const manifest = manifests.get(day);
    if (!manifest) {
      days.push({ day });
      continue;
    }
    const objects = (await listObjects(archive.s3, archive.bucket, prefix))
      .map((o) => o.key)
      .filter(isArchiveObjectKey);
    const folder = manifest.parquet[0]?.slice(compactDayPrefix(day).length).split("/")[0] ?? "";
    const late = readPlan(objects, manifest).ndjson.map((key) => `s3://${archive.bucket}/${key}`);
    days.push({ day, compacted: { folder, late } });
  }
  return athenaArchiveEvents(database, days);
}

async function readResults(client: AthenaClient, id: string, header: boolean) {
  let columns: string[] = [];
  let types: string[] = [];
  const rows: Array<Record<string, SqlValue | null>> = [];
  let token: string | undefined;
  let first = true;
  do {
    const page: GetQueryResultsCommandOutput = await client.send(
      new GetQueryResultsCommand({ QueryExecutionId: id, NextToken: token }),
    );
    if (first) {
      const info = page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? [];
      columns = info.map((c) => c.Name ?? "");
      types = info.map((c) => (c.Type ?? "varchar").toLowerCase());
    }
    const data = page.ResultSet?.Rows ?? [];
    for (const row of first && header ? data.slice(1) : data) {
      const values = row.Data ?? [];
      rows.push(
        Object.fromEntries(
          columns.map((c, i) => {
            const text = values[i]?.VarCharValue;
            if (text === undefined) return [c, null];
            return [c, NUMERIC.has((types[i] ?? "").replace(/\(.*$/, "")) ? Number(text) : text];
          }),
        ),
      );
    }
    first = false;
    token = page.NextToken;
  } while (token);
  return { columns, rows };
}
