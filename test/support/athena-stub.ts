import {
  type AthenaClient,
  GetQueryExecutionCommand,
  type QueryExecutionState,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from "@aws-sdk/client-athena";
import { expect } from "vitest";
import { trinoSyntaxErrors } from "../../tools/analytics/trino-statement";

/*
 * No Athena emulator exists: the compaction tests play Athena with a stub SDK client, on fauxqs's
 * S3. What every such stub does alike is here; what a CTAS does when started is each test's.
 */

/** A query the stub was asked to start: its text, token, state, and a CTAS's `external_location` (a key prefix). */
export interface StubQuery {
  sql: string;
  token?: string;
  state: QueryExecutionState;
  location?: string;
}

/**
 * An Athena client stub: StartQueryExecution checks the statement against Trino's grammar (Athena
 * engine 3), answers a ClientRequestToken seen before with that query's id (Athena's idempotency,
 * while `tokens.kept`), else records a query `q-<n>`, SUCCEEDED unless `started` (given a CTAS:
 * one with a location) changes it; StopQueryExecution cancels a query still running;
 * GetQueryExecution answers its state, `reason` of a failed one, and a CTAS's data manifest
 * (`athena-results/<id>-manifest.csv`, which `started` or the test writes).
 */
export function athenaStubClient(
  bucket: string,
  started: (id: string, query: StubQuery) => Promise<void>,
  reason = "HIVE_PATH_ALREADY_EXISTS or a fault",
) {
  const queries = new Map<string, StubQuery>();
  const tokens = { kept: true };
  const client = {
    async send(command: { input: Record<string, unknown> }) {
      if (command instanceof StartQueryExecutionCommand) {
        const token = command.input.ClientRequestToken as string | undefined;
        const again = tokens.kept && token && [...queries].find(([, q]) => q.token === token);
        if (again) return { QueryExecutionId: again[0] };
        const sql = String(command.input.QueryString);
        expect(trinoSyntaxErrors(sql)).toEqual([]);
        const id = `q-${queries.size + 1}`;
        const location = /external_location = 's3:\/\/[^/]+\/([^']+)'/.exec(sql)?.[1];
        const query: StubQuery = { sql, token, state: "SUCCEEDED", location };
        queries.set(id, query);
        if (location) await started(id, query);
        return { QueryExecutionId: id };
      }
      if (command instanceof StopQueryExecutionCommand) {
        const q = queries.get(String(command.input.QueryExecutionId));
        if (q && (q.state === "RUNNING" || q.state === "QUEUED")) q.state = "CANCELLED";
        return {};
      }
      if (command instanceof GetQueryExecutionCommand) {
        const id = String(command.input.QueryExecutionId);
        const q = queries.get(id);
        return {
          QueryExecution: {
            QueryExecutionId: id,
            Status: { State: q?.state, StateChangeReason: q?.state === "FAILED" ? reason : undefined },
            StatementType: "DDL",
            Statistics: {
              DataScannedInBytes: q?.location ? 4096 : 0,
              ...(q?.location
                ? { DataManifestLocation: `s3://${bucket}/athena-results/${id}-manifest.csv` }
                : {}),
            },
          },
        };
      }
      throw new Error(`unexpected ${command.constructor.name}`);
    },
  };
  return { client: client as unknown as AthenaClient, queries, tokens };
}
