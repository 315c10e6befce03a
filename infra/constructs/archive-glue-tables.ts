import { Stack } from "aws-cdk-lib";
import { CfnTable } from "aws-cdk-lib/aws-glue";
import type { Construct } from "constructs";
import {
  ARCHIVE_COLUMNS,
  ARCHIVE_TABLES,
  type ArchiveTable,
  ATHENA_COMPACT_TABLE,
  DAY_SET_TABLES,
  type DaySetTable,
} from "../../shared/analytics/dialect";
import { EARLIEST_EVENT_DAY } from "../../shared/analytics/edge-days";
import { S3_PREFIX } from "../../shared/platform/constants";

/**
 * The archive's Glue catalogue: the raw archive and its edge copies (JSON lines), their compacted
 * Parquet, and the day sets, each a Glue table with partition projection over its `date` (no
 * crawler, no partitions to add), with the date ranges the writers' keys fall in. Split from
 * activity-analytics.ts (#47: no hand-written file over 500 lines); ActivityAnalytics creates them.
 */
/** Glue column types of the archive lines (the partition columns date, and hour of the raw archive, aside). */
const COLUMN_TYPES: Record<string, string> = {
  app: "string",
  event_id: "string",
  received_at: "bigint",
  event_time: "bigint",
  rank: "int",
  trigger: "string",
  natural_key: "string",
  body: "string",
};
/** The JSON field of each column (the OpenX SerDe matches lower-cased keys). */
const JSON_FIELDS: Record<string, string> = {
  event_id: "eventid",
  received_at: "receivedat",
  event_time: "eventtime",
  natural_key: "naturalkey",
  app: "appid",
};

/**
 * The first receipt day a projection covers: the raw archive and its Parquet are dated by receipt
 * (the ingest's clock), which no deployment of this backend precedes.
 */
export const FIRST_RECEIPT_DAY = "2024-01-01";

/**
 * The date projection's range of each table (`date` partitions, YYYY-MM-DD, to `NOW`: the day a
 * query runs). Receipt-dated tables start at `FIRST_RECEIPT_DAY`; the edge copies and the day sets
 * are dated by event time (a published example of 2023, a client's clock behind), so from
 * `EARLIEST_EVENT_DAY`, before which the writers date nothing. A day after today (a client's clock
 * ahead) is read when it is recomputed, on that day: `NOW` covers it then. Athena generates only
 * the days a query's filter names (every query of the rollup names its day), so the longer range
 * costs only a query without a date filter.
 */
export const PROJECTION_RANGES = {
  archive_events: `${FIRST_RECEIPT_DAY},NOW`,
  archive_edges: `${EARLIEST_EVENT_DAY},NOW`,
  [ATHENA_COMPACT_TABLE]: `${FIRST_RECEIPT_DAY},NOW`,
  daySets: `${EARLIEST_EVENT_DAY},NOW`,
} as const;

/** Partition projection over a `date` partition of days from `range`: no crawler, no partitions to add. */
const dateProjection = (range: string) =>
  ({
    "projection.enabled": "true",
    "projection.date.type": "date",
    "projection.date.format": "yyyy-MM-dd",
    "projection.date.range": range,
    "projection.date.interval": "1",
    "projection.date.interval.unit": "DAYS",
  }) as const;

/** Text files of JSON lines (gzip read by its suffix). */
const JSON_LINES = {
  inputFormat: "org.apache.hadoop.mapred.TextInputFormat",
  outputFormat: "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
} as const;

/**
 * One archive table in Glue: JSON lines under its prefix, partition projection over the receipt
 * date (and hour, for the raw archive): no crawler, no partitions to add.
 */
export function archiveGlueTable(
  scope: Construct,
  name: ArchiveTable,
  databaseName: string,
  bucketName: string,
): CfnTable {
  const table = ARCHIVE_TABLES[name];
  const stack = Stack.of(scope);
  const root = `s3://${bucketName}/${table.prefix}`;
  return new CfnTable(scope, name === "archive_events" ? "ArchiveEvents" : "ArchiveEdges", {
    catalogId: stack.account,
    databaseName,
    tableInput: {
      name,
      description: `${table.description} (shared/contracts/bucket-layout.ts)`,
      tableType: "EXTERNAL_TABLE",
      partitionKeys: [
        { name: "date", type: "string", comment: table.date },
        ...(name === "archive_events"
          ? [{ name: "hour", type: "string", comment: "the receipt hour, 00-23 (UTC)" }]
          : []),
      ],
      parameters: {
        classification: "json",
        ...dateProjection(PROJECTION_RANGES[name]),
        ...(name === "archive_events"
          ? {
              "projection.hour.type": "integer",
              "projection.hour.range": "0,23",
              "projection.hour.digits": "2",
              "storage.location.template": `${root}date=\${date}/hour=\${hour}/`,
            }
          : { "storage.location.template": `${root}date=\${date}/` }),
      },
      storageDescriptor: {
        location: root,
        ...JSON_LINES,
        serdeInfo: {
          serializationLibrary: "org.openx.data.jsonserde.JsonSerDe",
          parameters: {
            "case.insensitive": "true",
            ...Object.fromEntries(Object.entries(JSON_FIELDS).map(([c, f]) => [`mapping.${c}`, f])),
          },
        },
        columns: Object.entries(COLUMN_TYPES).map(([column, type]) => ({
          name: column,
          type,
          comment: ARCHIVE_COLUMNS[column as keyof typeof ARCHIVE_COLUMNS],
        })),
      },
    },
  });
}

/**
 * The Parquet of compacted days (`compact/date=<day>/<compaction>/`, written by the Athena
 * compactor's CTAS): partitioned by `day` (a date projection) and `compaction` (injected: a query
 * names the folder its day's manifest gives, `athenaArchiveEvents`), so a query reads one folder
 * a day. Its columns are the compaction's (`compactionSelect`): the archive's, `date` included.
 */
export function compactGlueTable(scope: Construct, databaseName: string, bucketName: string): CfnTable {
  const stack = Stack.of(scope);
  const root = `s3://${bucketName}/${S3_PREFIX.compact}`;
  const types: Record<string, string> = { ...COLUMN_TYPES, rank: "int", date: "string" };
  return new CfnTable(scope, "ArchiveCompact", {
    catalogId: stack.account,
    databaseName,
    tableInput: {
      name: ATHENA_COMPACT_TABLE,
      description: "Closed receipt days of the raw archive as Parquet (shared/analytics/compaction.ts)",
      tableType: "EXTERNAL_TABLE",
      partitionKeys: [
        { name: "day", type: "string", comment: "the receipt day, YYYY-MM-DD" },
        { name: "compaction", type: "string", comment: "the compaction's folder (its manifest names it)" },
      ],
      parameters: {
        classification: "parquet",
        "projection.enabled": "true",
        "projection.day.type": "date",
        "projection.day.format": "yyyy-MM-dd",
        "projection.day.range": PROJECTION_RANGES[ATHENA_COMPACT_TABLE],
        "projection.day.interval": "1",
        "projection.day.interval.unit": "DAYS",
        "projection.compaction.type": "injected",
        "storage.location.template": `${root}date=\${day}/\${compaction}/`,
      },
      storageDescriptor: {
        location: root,
        inputFormat: "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat: "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo: { serializationLibrary: "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe" },
        columns: [
          "app",
          "date",
          "event_id",
          "received_at",
          "event_time",
          "rank",
          "trigger",
          "natural_key",
          "body",
        ].map((column) => ({ name: column, type: types[column] ?? "string" })),
      },
    },
  });
}

const GLUE_TYPES = { VARCHAR: "string", BIGINT: "bigint", BOOLEAN: "boolean" } as const;

/**
 * One day-set table in Glue (`DAY_SET_TABLES`): gzip JSON lines, one folder a closed day,
 * partition projection over `date`: no crawler, no partitions to add.
 */
export function daySetGlueTable(
  scope: Construct,
  name: DaySetTable,
  databaseName: string,
  bucketName: string,
): CfnTable {
  const table = DAY_SET_TABLES[name];
  const stack = Stack.of(scope);
  const days = `s3://${bucketName}/${table.prefix}`;
  const id = name.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
  return new CfnTable(scope, `DaySet${id}`, {
    catalogId: stack.account,
    databaseName,
    tableInput: {
      name,
      description: `${table.description} (shared/analytics/user-sets/)`,
      tableType: "EXTERNAL_TABLE",
      partitionKeys: [{ name: "date", type: "string", comment: "the closed day, YYYY-MM-DD" }],
      parameters: {
        classification: "json",
        ...dateProjection(PROJECTION_RANGES.daySets),
        "storage.location.template": `${days}\${date}/`,
      },
      storageDescriptor: {
        location: days.slice(0, -"date=".length),
        ...JSON_LINES,
        serdeInfo: {
          serializationLibrary: "org.openx.data.jsonserde.JsonSerDe",
          parameters: {
            "case.insensitive": "true",
            ...Object.fromEntries(
              Object.entries(table.fields as Record<string, string>).map(([c, f]) => [`mapping.${c}`, f]),
            ),
          },
        },
        columns: Object.entries(table.columns).map(([column, type]) => ({
          name: column,
          type: GLUE_TYPES[type],
        })),
      },
    },
  });
}
