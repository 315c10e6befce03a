import {
  AthenaClient,
  GetQueryExecutionCommand,
  type QueryExecutionState,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from "@aws-sdk/client-athena";
import { CopyObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { compactionSources } from "../../../shared/analytics/compaction";
import { duckDbCompactor } from "../../../shared/analytics/engines/duckdb-compactor";
import { createBucket, testClients, uniqueName } from "../aws";
import { type Actor, answeredClient, type RequestGate, STUB_CLIENT_CONFIG } from "./gate";

/*
 * Athena for the writers model (issue #50): no emulator exists, so an SDK client whose answers
 * play Athena's part on fauxqs's S3, as test/integration/athena-compactor's stub does, with Parquet
 * DuckDB can read (the model's engine reads the compacted days): a CTAS of a day writes, at its
 * start, what it read then (the day's rows, made by the DuckDB compactor in a bucket of its own)
 * as its second file, kept until it ends, and an empty first file at once. A query started "run"
 * stays RUNNING until `endRunning` (Athena finishing a query its caller no longer knows).
 */

/** What a CTAS does when started: succeed at once, or run on until `endRunning`. */
export type CtasBehaviour = "succeed" | "run";

interface StubQuery {
  token?: string;
  state: QueryExecutionState;
  location?: string;
  /** The rows it read at its start, written as its second file when it ends. */
  rows?: Uint8Array;
}

/** Athena's state in a run: its queries and what the next CTAS starts will do. */
export interface AthenaDouble {
  behaviours: CtasBehaviour[];
  queries: Map<string, StubQuery>;
  /** Every query still running ends (succeeds): its files and its data manifest written. */
  endRunning(): Promise<number>;
  /** A client of `actor` (its requests steps at the gate) answering as Athena. */
  client(gate: RequestGate, actor: Actor): AthenaClient;
}

/** The day's rows as Parquet, as the day's NDJSON holds them now (a CTAS's read). */
async function dayRows(s3: S3Client, bucket: string, day: string, scratch: string): Promise<Uint8Array> {
  const sources = await compactionSources(s3, bucket, day);
  for (const key of sources)
    await s3.send(new CopyObjectCommand({ Bucket: scratch, Key: key, CopySource: `${bucket}/${key}` }));
  const manifest = await duckDbCompactor({ s3, bucket: scratch }).compactDay(day);
  const out = await s3.send(new GetObjectCommand({ Bucket: scratch, Key: manifest.parquet[0] }));
  return (await out.Body?.transformToByteArray()) ?? new Uint8Array();
}

/** Athena over the run's bucket (its own S3 client: what it writes is Athena's, not the caller's). */
export async function athenaDouble(bucket: string): Promise<AthenaDouble> {
  const { s3 } = testClients();
  const queries = new Map<string, StubQuery>();
  const put = (key: string, body: Uint8Array | string) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  const file = (q: StubQuery, n: number) => `${q.location}bucket-0000${n}.parquet`;
  const finish = async (id: string, q: StubQuery) => {
    await put(file(q, 1), q.rows ?? new Uint8Array());
    await put(
      `athena-results/${id}-manifest.csv`,
      [0, 1].map((n) => `s3://${bucket}/${file(q, n)}`).join("\n"),
    );
    q.state = "SUCCEEDED";
  };
  const empty = await emptyParquet();
  const double: AthenaDouble = {
    behaviours: [],
    queries,
    async endRunning() {
      const running = [...queries].filter(([, q]) => q.state === "RUNNING");
      for (const [id, q] of running) await finish(id, q);
      return running.length;
    },
    client(gate, actor) {
      return answeredClient(
        new AthenaClient(STUB_CLIENT_CONFIG),
        gate,
        actor,
        "answerAsAthena",
        (command, input) => answer(command, input),
      );
    },
  };
  const answer = async (
    command: string,
    input: Record<string, unknown>,
  ): Promise<Record<string, unknown>> => {
    if (command === StartQueryExecutionCommand.name) {
      const token = typeof input.ClientRequestToken === "string" ? input.ClientRequestToken : undefined;
      const again = token && [...queries].find(([, q]) => q.token === token);
      if (again) return { QueryExecutionId: again[0] };
      const sql = String(input.QueryString);
      const id = `q-${queries.size + 1}`;
      const location = /external_location = 's3:\/\/[^/]+\/([^']+)'/.exec(sql)?.[1];
      const q: StubQuery = { token, state: "SUCCEEDED", location };
      queries.set(id, q);
      const day = /compact\/date=(\d{4}-\d{2}-\d{2})\//.exec(location ?? "")?.[1];
      if (!location || !day) return { QueryExecutionId: id };
      q.rows = await dayRows(s3, bucket, day, await createBucket(s3, uniqueName("wm-athena")));
      await put(file(q, 0), empty);
      if ((double.behaviours.shift() ?? "succeed") === "succeed") await finish(id, q);
      else q.state = "RUNNING";
      return { QueryExecutionId: id };
    }
    if (command === StopQueryExecutionCommand.name) {
      const q = queries.get(String(input.QueryExecutionId));
      if (q?.state === "RUNNING") q.state = "CANCELLED";
      return {};
    }
    if (command === GetQueryExecutionCommand.name) {
      const id = String(input.QueryExecutionId);
      const q = queries.get(id);
      return {
        QueryExecution: {
          QueryExecutionId: id,
          Status: { State: q?.state },
          StatementType: "DDL",
          Statistics: {
            DataScannedInBytes: 0,
            ...(q?.location
              ? { DataManifestLocation: `s3://${bucket}/athena-results/${id}-manifest.csv` }
              : {}),
          },
        },
      };
    }
    throw new Error(`the Athena double has no ${command}`);
  };
  return double;
}

/** A Parquet file of no row with the compaction's columns (a bucket of a CTAS that got no app). */
async function emptyParquet(): Promise<Uint8Array> {
  const { s3, destroy } = testClients();
  try {
    const scratch = await createBucket(s3, uniqueName("wm-empty"));
    const manifest = await duckDbCompactor({ s3, bucket: scratch }).compactDay("2000-01-01");
    const out = await s3.send(new GetObjectCommand({ Bucket: scratch, Key: manifest.parquet[0] }));
    return (await out.Body?.transformToByteArray()) ?? new Uint8Array();
  } finally {
    destroy();
  }
}
