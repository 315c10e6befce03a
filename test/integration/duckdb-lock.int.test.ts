import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import type { SqlEngine } from "../../shared/analytics/engines/sql-engine";
import { appSegment } from "../../shared/contracts/bucket-layout";
import { SqlQueryError } from "../../shared/platform/errors";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { createBucket, testClients, uniqueName } from "../support/aws";

/**
 * The DuckDB engine runs ad-hoc SQL from `webhook sql`: one statement of type SELECT, parsed by
 * DuckDB itself, in a session that reads only the archive copy it was given (no other file, no
 * extension, settings locked). Each case is a bypass of the old keyword check, or a way to the
 * host's files; each must be refused and leave no trace.
 */
const { s3 } = testClients();
let engine: SqlEngine;
let scratch: string;
const appId = uniqueName("app");

beforeAll(async () => {
  const bucket = await createBucket(s3, uniqueName("lock"));
  await archiveBatch(
    [
      {
        messageId: "m-1",
        eventId: "e".repeat(64),
        receivedAt: Date.UTC(2026, 0, 2, 12),
        trigger: "group_created",
        appId,
        body: JSON.stringify({ trigger: "group_created", appId, data: {} }),
      },
    ],
    s3BlobStore(s3, bucket),
  );
  engine = duckDbEngine({ s3, bucket });
  scratch = mkdtempSync(join(tmpdir(), "duckdb-lock-"));
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const scope = () => ({ app: appSegment(appId) });

describe("the DuckDB engine runs one read-only statement over the archive it was given, nothing else", () => {
  it("still answers a SELECT over the archive (WITH, a $$ string and a '--' inside a string included)", async () => {
    const result = await engine.query(
      "WITH x AS (SELECT trigger FROM archive_events) SELECT trigger, '--' AS dashes, $$a;b$$ AS s FROM x",
      {},
      scope(),
    );
    expect(result.rows).toEqual([{ trigger: "group_created", dashes: "--", s: "a;b" }]);
  });

  it.each([
    [
      "a second statement hidden after '--' inside a string",
      (f: string) => `SELECT '--' AS a; COPY (SELECT 42 AS x) TO '${f}'`,
    ],
    [
      "a second statement hidden after '/*' inside a string",
      (f: string) => `SELECT '/*' AS a; COPY (SELECT 42 AS x) TO '${f}' --*/`,
    ],
    [
      "a second statement after a $$ string",
      (f: string) => `SELECT $$'$$ AS a; COPY (SELECT 42 AS x) TO '${f}'`,
    ],
    ["COPY on its own", (f: string) => `COPY (SELECT 42 AS x) TO '${f}'`],
    ["EXPLAIN ANALYZE of a COPY", (f: string) => `EXPLAIN ANALYZE COPY (SELECT 42 AS x) TO '${f}'`],
    ["ATTACH of a new database file", (f: string) => `ATTACH '${f}' AS other`],
  ])("refuses %s and writes no file", async (_, statement) => {
    const file = join(scratch, uniqueName("out"));
    const error = await engine.query(statement(file), {}, scope()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlQueryError);
    expect(existsSync(file)).toBe(false);
  });

  it.each([
    ["the host's files through read_text", "SELECT content FROM read_text('/etc/hostname')"],
    ["the host's files through read_csv", "SELECT * FROM read_csv('/etc/passwd')"],
    ["a listing of the host's directories", "SELECT * FROM glob('/etc/*')"],
    ["an in-memory ATTACH", "ATTACH ':memory:' AS other"],
    ["installing an extension", "INSTALL httpfs"],
    ["loading an extension", "LOAD httpfs"],
    ["turning file access back on", "SET enable_external_access = true"],
    ["a CALL", "CALL pragma_version()"],
  ])("refuses %s", async (_, statement) => {
    await expect(engine.query(statement, {}, scope())).rejects.toBeInstanceOf(SqlQueryError);
  });
});
