import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { DuckDBConnection, StatementType } from "@duckdb/node-api";
import { listEach, listObjects } from "../../adapters/s3-listing";
import { dayOfKey, isArchiveObjectKey } from "../../contracts/bucket-layout";
import { SqlQueryError } from "../../platform/errors";
import { dayManifests, dayPrefixes, readPlan } from "../compaction";
import {
  ARCHIVE_TABLES,
  type ArchiveTable,
  bindNamed,
  DAY_SET_TABLES,
  type DaySetTable,
  DUCKDB_MACROS,
  duckDbArchiveViews,
  duckDbDaySetViews,
  type SqlValue,
} from "../dialect";
import type { DayRange, SqlEngine, SqlResult } from "./sql-engine";

export interface DuckDbEngineOptions {
  /** The S3 API the archive is read through (fauxqs locally). */
  s3: S3Client;
  bucket: string;
  /** Where archive objects are copied for DuckDB to read (a fresh temporary directory each query). */
  workDir?: string;
  /**
   * Read every NDJSON object, compacted days too, and give each line its object as Athena's
   * `"$path"` column (`s3://<bucket>/<key>`): what an erasure's search of the archive needs
   * (`shared/erasure`). The Parquet is not read: it is derived from those objects.
   */
  objectPaths?: boolean;
}

/** A DuckDB value as a JSON-friendly value: BIGINTs and HUGEINTs (sums) as numbers, the rest as text. */
function plain(value: unknown): SqlValue | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "number" || typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  return String(value);
}

/** Extensions are neither installed nor loaded: the JSON reader the views use is built in. */
const INSTANCE_OPTIONS = {
  autoinstall_known_extensions: "false",
  autoload_known_extensions: "false",
  allow_community_extensions: "false",
  allow_unsigned_extensions: "false",
} as const;

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * The settings that confine a session to its archive copy in `dir`, run after the views are
 * defined: files only under `dir` (reads of the copy, spills), no other file, directory, network
 * or extension, and the configuration locked, so no later statement can undo them.
 */
function lockStatements(dir: string): string[] {
  return [
    `SET allowed_directories = [${quoted(`${dir}/`)}]`,
    `SET temp_directory = ${quoted(join(dir, ".spill"))}`,
    "SET enable_external_access = false",
    "SET lock_configuration = true",
  ];
}

/**
 * DuckDB, embedded, as the `SqlEngine` of the local stack. Each query copies the archive objects
 * in its scope through the S3 API into a temporary directory laid out as the bucket is (so the
 * emulator's in-memory mode and a state directory work alike, and Hive partitions come from the
 * paths), defines `archive_events` and `archive_edges` over them (a compacted day: its Parquet and
 * the objects archived after it, `readPlan`), runs, and removes the copy. `bytesScanned` is the
 * bytes of the objects copied: what Athena would read for the same partitions.
 *
 * The statement is ad-hoc SQL too (`webhook sql`), so it runs only when DuckDB's own parser finds
 * exactly one statement, of type SELECT (WITH, VALUES, FROM-first, SHOW and DESCRIBE are SELECTs
 * to DuckDB; COPY, ATTACH, SET, INSTALL, EXPLAIN, CALL are not), in a session that can read
 * nothing but its archive copy (`lockStatements`): a refusal is a `SqlQueryError` in state REFUSED.
 *
 * @example await duckDbEngine({ s3, bucket }).query("SELECT count(*) AS n FROM archive_events", {}, { from: "2026-01-02", to: "2026-01-02" })
 */
export function duckDbEngine(options: DuckDbEngineOptions): SqlEngine {
  return {
    name: "duckdb",
    async query(sql, params = {}, scope = {}) {
      const dir = mkdtempSync(join(options.workDir ?? tmpdir(), "archive-sql-"));
      try {
        const events = await copyArchive(options, "archive_events", scope, dir);
        const edges = scope.edges
          ? await copyArchive(options, "archive_edges", scope.edges, dir)
          : { ndjson: [], parquet: [], bytes: 0 };
        const sets = scope.sets ? await copyDaySets(options, scope.sets, dir) : { files: {}, bytes: 0 };
        const { DuckDBInstance, StatementType } = await import("@duckdb/node-api");
        const instance = await DuckDBInstance.create(":memory:", INSTANCE_OPTIONS);
        const connection = await instance.connect();
        try {
          const views = [
            ...duckDbArchiveViews(
              { archive_events: events, archive_edges: edges },
              scope.app,
              options.objectPaths ? { dir, bucket: options.bucket } : undefined,
            ),
            ...duckDbDaySetViews(sets.files, scope.app),
          ];
          for (const statement of [...DUCKDB_MACROS, ...views, ...lockStatements(dir)])
            await connection.run(statement);
          const result = await run(connection, sql, params, StatementType.SELECT);
          return { ...result, bytesScanned: events.bytes + edges.bytes + sets.bytes };
        } finally {
          connection.closeSync();
          instance.closeSync();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Runs `sql` if DuckDB parses it as one statement of type `select` (the enum, passed in: the module is loaded lazily). */
async function run(
  connection: DuckDBConnection,
  sql: string,
  params: Readonly<Record<string, SqlValue>>,
  select: StatementType,
): Promise<Omit<SqlResult, "bytesScanned">> {
  const bound = bindNamed(sql, params);
  try {
    const extracted = await connection.extractStatements(bound.text);
    if (extracted.count !== 1)
      throw new SqlQueryError(`one statement is allowed, this text has ${extracted.count}`, false, "REFUSED");
    const prepared = await extracted.prepare(0);
    if (prepared.statementType !== select)
      throw new SqlQueryError(
        "only a SELECT is allowed (WITH, VALUES, FROM, SHOW, DESCRIBE)",
        false,
        "REFUSED",
      );
    prepared.bind(bound.values);
    const reader = await prepared.runAndReadAll();
    const columns = reader.columnNames();
    const rows = reader
      .getRowObjectsJS()
      .map((row) => Object.fromEntries(columns.map((c) => [c, plain(row[c])])));
    return { columns, rows };
  } catch (error) {
    if (error instanceof SqlQueryError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new SqlQueryError(message.split("\n")[0] ?? message, false);
  }
}

/** Copies one object into `dir`, its key as the path: the path, and its bytes. */
async function copyObject(
  options: DuckDbEngineOptions,
  key: string,
  dir: string,
): Promise<{ path: string; bytes: number }> {
  const out = await options.s3.send(new GetObjectCommand({ Bucket: options.bucket, Key: key }));
  const body = (await out.Body?.transformToByteArray()) ?? new Uint8Array();
  const path = join(dir, key);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
  return { path, bytes: body.byteLength };
}

/**
 * Copies one archive table's objects of a range of days into `dir`, keys as paths: NDJSON, and
 * for `archive_events` a compacted day's Parquet in place of the objects its manifest names
 * (`readPlan`). Returns the files and their bytes.
 */
async function copyArchive(
  options: DuckDbEngineOptions,
  table: ArchiveTable,
  days: DayRange,
  dir: string,
): Promise<{ ndjson: string[]; parquet: string[]; bytes: number }> {
  const listed = await listEach(options.s3, options.bucket, dayPrefixes(ARCHIVE_TABLES[table].prefix, days));
  const objects = listed.flat().filter(({ key }) => {
    const day = dayOfKey(key);
    if (!day || !isArchiveObjectKey(key)) return false;
    return (!days.from || day >= days.from) && (!days.to || day <= days.to);
  });
  const compacted =
    table === "archive_events" && !options.objectPaths
      ? await dayManifests(options.s3, options.bucket, days)
      : new Map();
  const byDay = new Map<string, string[]>();
  for (const { key } of objects)
    byDay.set(dayOfKey(key) ?? "", [...(byDay.get(dayOfKey(key) ?? "") ?? []), key]);
  for (const day of compacted.keys()) if (!byDay.has(day)) byDay.set(day, []);
  const copied = { ndjson: [] as string[], parquet: [] as string[], bytes: 0 };
  for (const [day, keys] of byDay) {
    const plan = readPlan(keys, compacted.get(day));
    for (const [kind, list] of [
      ["ndjson", plan.ndjson],
      ["parquet", plan.parquet],
    ] as const)
      for (const key of list) {
        const { path, bytes } = await copyObject(options, key, dir);
        copied[kind].push(path);
        copied.bytes += bytes;
      }
  }
  return copied;
}

/** Copies the day-set objects of a range of closed days into `dir`, keys as paths, per table (an `everyDay` table's of every day). */
async function copyDaySets(
  options: DuckDbEngineOptions,
  days: DayRange,
  dir: string,
): Promise<{ files: Partial<Record<DaySetTable, string[]>>; bytes: number }> {
  const out: { files: Partial<Record<DaySetTable, string[]>>; bytes: number } = { files: {}, bytes: 0 };
  for (const [name, table] of Object.entries(DAY_SET_TABLES) as Array<
    [DaySetTable, { prefix: string; everyDay?: boolean }]
  >) {
    const files: string[] = [];
    for (const { key } of await listObjects(options.s3, options.bucket, table.prefix)) {
      const day = dayOfKey(key);
      if (!day) continue;
      if (!table.everyDay && ((days.from && day < days.from) || (days.to && day > days.to))) continue;
      const { path, bytes } = await copyObject(options, key, dir);
      files.push(path);
      out.bytes += bytes;
    }
    out.files[name] = files;
  }
  return out;
}
