import { Duration, Stack, Token, Validations } from "aws-cdk-lib";
import { CfnWorkGroup } from "aws-cdk-lib/aws-athena";
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { CfnDatabase } from "aws-cdk-lib/aws-glue";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import type { Bucket } from "aws-cdk-lib/aws-s3";
import type { ITopic } from "aws-cdk-lib/aws-sns";
import { Construct } from "constructs";
import {
  ARCHIVE_TABLES,
  type ArchiveTable,
  ATHENA_COMPACT_TABLE,
  DAY_SET_TABLES,
  type DaySetTable,
} from "../../shared/analytics/dialect";
import { rollupEnvironment } from "../../shared/config/function-environment";
import { S3_PREFIX } from "../../shared/platform/constants";
import { METRICS_NAMESPACE } from "../../shared/platform/observability";
import { OUTCOME_METRICS } from "../../shared/platform/outcomes";
import { ACTIVITY_TABLE } from "../../shared/platform/tables";
import { FUNCTION_ENTRIES, SQL_DIR } from "../bundling";
import { archiveGlueTable, compactGlueTable, daySetGlueTable } from "./archive-glue-tables";
import { BackendFunction } from "./backend-function";
import type { DataBucket } from "./data-bucket";
import { declaredTable } from "./projection-tables";

export interface ActivityAnalyticsProps {
  readonly data: DataBucket;
  readonly logRetention: RetentionDays;
  /** Recompute today and yesterday every this many minutes. @default 15 */
  readonly everyMinutes?: number;
  /** A day is final this long after its end. @default 120 */
  readonly graceMinutes?: number;
  /** Athena cancels a query that would scan more (MB). @default 10240 */
  readonly bytesScannedCutoffMb?: number;
  /** How long Athena's query results are kept, days. @default 7 */
  readonly athenaResultsDays?: number;
  /**
   * How long the archive (and what is dated with it) is kept, days (`retainArchiveDays`): the
   * rollup sweeps what expired by the day in its keys once a day, and may delete there.
   * @default - kept: no sweep, no delete granted
   */
  readonly archiveDays?: number;
  /** Where the failed-rollup alarm goes. */
  readonly alarmTopic: ITopic;
}

/**
 * Activity analytics: the raw archive and its edge copies as Athena tables (`archive_events`,
 * `archive_edges`: Glue, partition projection over the receipt date (and hour, for the raw
 * archive): no crawler, no partitions to add; the app a column of every line), a workgroup with
 * encrypted results and a bytes-scanned cutoff, the activity table, and the rollup function on
 * a schedule, with an alarm when a day fails.
 */
export class ActivityAnalytics extends Construct {
  public readonly table: Table;
  public readonly database: CfnDatabase;
  public readonly workGroup: CfnWorkGroup;
  public readonly rollup: BackendFunction;

  constructor(scope: Construct, id: string, props: ActivityAnalyticsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const bucket = props.data.bucket;
    this.table = activityTable(this);
    const databaseName = `${stack.stackName.toLowerCase().replace(/[^a-z0-9_]/g, "_")}_archive`;
    this.database = new CfnDatabase(this, "Database", {
      catalogId: stack.account,
      databaseInput: { name: databaseName, description: "The webhook backend's raw archive" },
    });
    // The two archive tables (`ARCHIVE_TABLES`): the raw archive, and the edge copies the
    // rollup reads beside a day's raw archive. Same columns, same line format.
    for (const name of Object.keys(ARCHIVE_TABLES) as ArchiveTable[])
      archiveGlueTable(this, name, databaseName, bucket.bucketName).node.addDependency(this.database);
    compactGlueTable(this, databaseName, bucket.bucketName).node.addDependency(this.database);
    // The day sets (`DAY_SET_TABLES`): users over time, conversations, memberships, for `sql --stack`.
    for (const name of Object.keys(DAY_SET_TABLES) as DaySetTable[])
      daySetGlueTable(this, name, databaseName, bucket.bucketName).node.addDependency(this.database);
    this.workGroup = athenaWorkGroup(
      this,
      bucket,
      props.bytesScannedCutoffMb ?? 10_240,
      props.athenaResultsDays ?? 7,
    );
    this.rollup = this.rollupFunction(props, databaseName);
    this.grantRollup(props, databaseName);
    rollupSchedule(this, this.rollup, props);
  }

  /**
   * The rollup function: every app's days in one pass a day. No reserved concurrency: Lambda keeps
   * 100 of the account's concurrency unreserved, so a reservation fails stack creation on an account
   * whose quota is below 101 (new accounts start lower). Two runs that overlap (a slow run and the
   * next tick, or an asynchronous invocation delivered twice) are serialised by the archive lease:
   * each day's pass that writes holds it, and the schedule never waits for it, so the second run
   * defers the day (`passesDeferred`, not a failure) and the next tick passes it.
   */
  private rollupFunction(props: ActivityAnalyticsProps, databaseName: string): BackendFunction {
    const bucket = props.data.bucket;
    return new BackendFunction(this, "Rollup", {
      service: "rollup",
      invokedBy: "schedule",
      entry: FUNCTION_ENTRIES.rollup,
      description:
        "Recomputes today's and yesterday's activity figures of every app from the raw archive (Athena, one query a day)",
      memorySize: 256,
      timeout: Duration.minutes(10),
      logRetention: props.logRetention,
      bundledFiles: { from: SQL_DIR, to: "sql" },
      environment: rollupEnvironment({
        activityTable: this.table.tableName,
        dataBucket: bucket.bucketName,
        athenaWorkGroup: this.workGroup.ref,
        glueDatabase: databaseName,
        graceMinutes: props.graceMinutes ?? 120,
        ...(props.archiveDays === undefined ? {} : { archiveDays: props.archiveDays }),
      }),
    });
  }

  /** What the rollup may do: run queries in its workgroup, read the catalog, write the activity table, read the archive. */
  private grantRollup(props: ActivityAnalyticsProps, databaseName: string): void {
    const stack = Stack.of(this);
    const bucket = props.data.bucket;
    const fn = this.rollup.function;
    const arn = (service: string, resource: string) =>
      `arn:${stack.partition}:${service}:${stack.region}:${stack.account}:${resource}`;
    fn.addToRolePolicy(
      new PolicyStatement({
        // Stop: a query still running at the invocation's deadline is stopped, not left billing.
        actions: [
          "athena:StartQueryExecution",
          "athena:GetQueryExecution",
          "athena:GetQueryResults",
          "athena:StopQueryExecution",
        ],
        resources: [arn("athena", `workgroup/${this.workGroup.ref}`)],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ["glue:GetDatabase", "glue:GetTable"],
        resources: [
          arn("glue", "catalog"),
          arn("glue", `database/${databaseName}`),
          ...[...Object.keys(ARCHIVE_TABLES), ATHENA_COMPACT_TABLE].map((name) =>
            arn("glue", `table/${databaseName}/${name}`),
          ),
        ],
      }),
    );
    // The compaction's CTAS creates a table named compact_<day>_<hash> and drops it (its files stay).
    const ctasTables = arn("glue", `table/${databaseName}/compact_*`);
    Validations.of(fn).acknowledge({
      // cdk-nag names the resource as rendered: a pseudo parameter, or the stack's own value.
      id: `AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:glue:${rendered(stack.region, "<AWS::Region>")}:${rendered(stack.account, "<AWS::AccountId>")}:table/${databaseName}/compact_*]`,
      reason:
        "The Athena compactor's CTAS creates one table a day named compact_<day>_<hash of its sources> and drops it at once: the names are made per compaction, so the grant is their prefix in the archive's own database.",
    });
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ["glue:CreateTable", "glue:DeleteTable", "glue:GetTable"],
        resources: [arn("glue", "catalog"), arn("glue", `database/${databaseName}`), ctasTables],
      }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: ["dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem"],
        resources: [this.table.tableArn],
      }),
    );
    // Athena reads the archive and writes its results with the caller's permissions.
    props.data.grantObjects(this.rollup, ["s3:GetObject"], [S3_PREFIX.raw, S3_PREFIX.edge]);
    props.data.grantObjects(
      this.rollup,
      ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
      [S3_PREFIX.athenaResults],
    );
    props.data.grantListPrefix(this.rollup, S3_PREFIX.raw);
    props.data.grantListPrefix(this.rollup, S3_PREFIX.edge);
    // Compacted days: Athena reads and (CTAS) writes the Parquet, the rollup the manifests and
    // each CTAS's marker; it deletes a failed CTAS's folder before the retry, files its query did
    // not write, and a day's earlier compaction once replaced.
    props.data.grantObjects(
      this.rollup,
      [
        "s3:GetObject",
        "s3:PutObject",
        "s3:DeleteObject",
        "s3:AbortMultipartUpload",
        "s3:ListMultipartUploadParts",
      ],
      [S3_PREFIX.compact],
    );
    props.data.grantListPrefix(this.rollup, S3_PREFIX.compact);
    // The ledger of its passes (`rollup/date=<day>.json`): read, then rewritten.
    props.data.grantObjects(this.rollup, ["s3:GetObject", "s3:PutObject"], [S3_PREFIX.rollup]);
    props.data.grantListPrefix(this.rollup, S3_PREFIX.rollup);
    // Each closed day's user sets and first sightings (users over time), written by a final pass.
    props.data.grantObjects(this.rollup, ["s3:GetObject", "s3:PutObject"], [S3_PREFIX.users]);
    props.data.grantListPrefix(this.rollup, S3_PREFIX.users);
    // With a retention, the daily sweep by the day in the key (`archive-expiry.ts`) lists the
    // day-dated prefixes and deletes what expired there (compact/ is granted above): no more.
    if (props.archiveDays !== undefined) {
      props.data.grantObjects(
        this.rollup,
        ["s3:DeleteObject"],
        [S3_PREFIX.raw, S3_PREFIX.edge, S3_PREFIX.users, S3_PREFIX.imports],
      );
      props.data.grantListPrefix(this.rollup, S3_PREFIX.imports);
    }
    fn.addToRolePolicy(
      new PolicyStatement({ actions: ["s3:GetBucketLocation"], resources: [bucket.bucketArn] }),
    );
  }
}

/** A stack attribute as cdk-nag renders it in a finding: its value, or its pseudo parameter when it is a token. */
const rendered = (value: string, pseudo: string) => (Token.isUnresolved(value) ? pseudo : value);

/** The activity table: on demand (a few writes per tick), PITR, encrypted, retained. */
function activityTable(scope: Construct): Table {
  return declaredTable(scope, "Activity", ACTIVITY_TABLE);
}

/** The workgroup: engine 3, encrypted results kept `resultsDays` (7 by default), a bytes-scanned cutoff per query. */
function athenaWorkGroup(
  scope: Construct,
  bucket: Bucket,
  cutoffMb: number,
  resultsDays: number,
): CfnWorkGroup {
  const stack = Stack.of(scope);
  const workGroup = new CfnWorkGroup(scope, "WorkGroup", {
    name: `${stack.stackName}-activity`,
    description: "Activity rollups and ad-hoc SQL over the raw archive",
    recursiveDeleteOption: true,
    workGroupConfiguration: {
      enforceWorkGroupConfiguration: true,
      publishCloudWatchMetricsEnabled: true,
      bytesScannedCutoffPerQuery: cutoffMb * 1024 * 1024,
      engineVersion: { selectedEngineVersion: "Athena engine version 3" },
      resultConfiguration: {
        outputLocation: `s3://${bucket.bucketName}/${S3_PREFIX.athenaResults}`,
        encryptionConfiguration: { encryptionOption: "SSE_S3" },
      },
    },
  });
  bucket.addLifecycleRule({ prefix: S3_PREFIX.athenaResults, expiration: Duration.days(resultsDays) });
  return workGroup;
}

/** The schedule that runs the rollup, and the alarm when a day fails. */
function rollupSchedule(scope: Construct, rollup: BackendFunction, props: ActivityAnalyticsProps): void {
  const schedule = new Rule(scope, "Schedule", {
    description: "Recomputes today's and yesterday's activity figures",
    schedule: Schedule.rate(Duration.minutes(props.everyMinutes ?? 15)),
    targets: [new LambdaFunction(rollup.function, { retryAttempts: 0 })],
  });
  Validations.of(schedule).acknowledge({
    id: "Serverless::Serverless-EventBusDLQ",
    reason:
      "A schedule tick carries no data: a missed or failed run is superseded by the next, which recomputes the same days from the archive. Nothing is lost to dead-letter.",
  });
  const failed = new Alarm(scope, "RollupFailed", {
    alarmDescription:
      "An activity rollup failed (a query failed or was cancelled, or the write did not go through): the day keeps its previous figures. See the rollup function's logs.",
    metric: new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: OUTCOME_METRICS.rollup.metric,
      dimensionsMap: { service: "rollup", outcome: "failed" },
      statistic: "Sum",
      period: Duration.minutes(Math.max(5, props.everyMinutes ?? 15)),
    }),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  failed.addAlarmAction(new SnsAction(props.alarmTopic));
}
