import { Duration, RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  type LifecycleRule,
  ObjectOwnership,
  StorageClass,
  TransitionDefaultMinimumObjectSize,
} from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import { IMPORT_RECORDS_EXPIRY_GRACE_DAYS } from "../../shared/analytics/archive-expiry";
import { S3_PREFIX } from "../../shared/platform/constants";
import type { BackendFunction } from "./backend-function";

/** A key prefix of the data bucket. */
export type DataPrefix = (typeof S3_PREFIX)[keyof typeof S3_PREFIX];

/**
 * The least time S3 bills an object in a class (deleted or moved earlier, the rest is billed):
 * a transition that the retention would end sooner costs more than it saves.
 */
export const MIN_STORAGE_DAYS = { infrequentAccess: 30, glacierInstantRetrieval: 90 } as const;

export interface DataBucketProps {
  /**
   * Days before raw archive (and edge), compacted Parquet and quarantine objects move to Infrequent
   * Access (those of 128 KB or more: S3 moves no smaller object, `TransitionDefaultMinimumObjectSize`). @default 30
   */
  readonly infrequentAccessAfterDays?: number;
  /** Days before they move to Glacier Instant Retrieval. @default 180 */
  readonly glacierAfterDays?: number;
  /** Days before recordings move to Infrequent Access (left out if their retention ends within 30 days of it). @default 30 */
  readonly recordingsInfrequentAccessAfterDays?: number;
  /** Days before recordings move to Glacier Instant Retrieval (left out if their retention ends within 90 days of it). @default 120 */
  readonly recordingsGlacierAfterDays?: number;
  /** How long each kind of data is kept, days (unset: until deleted). */
  readonly retention?: {
    /** The raw archive, its edge copies, the compacted Parquet, the day sets and the import records. */
    readonly archiveDays?: number;
    readonly quarantineDays?: number;
    readonly recordingsDays?: number;
    /** @default 30 */
    readonly oversizeDays?: number;
    /** The versions an overwrite or a delete left behind. @default 30 */
    readonly noncurrentVersionsDays?: number;
    /** The server access log's records (the bucket's audit trail, one record per request). @default 365 */
    readonly accessLogDays?: number;
  };
}

/**
 * The transitions of a rule: to Infrequent Access after `ia` days and Glacier IR after `glacier`,
 * each only when the object stays in the class at least as long as S3 bills it (`expireAfter`
 * unset: kept until deleted).
 */
function transitionsOf(ia: number, glacier: number, expireAfter?: number) {
  const lasts = (after: number, minimum: number) =>
    expireAfter === undefined || expireAfter >= after + minimum;
  return [
    ...(lasts(ia, MIN_STORAGE_DAYS.infrequentAccess) && glacier > ia
      ? [{ storageClass: StorageClass.INFREQUENT_ACCESS, transitionAfter: Duration.days(ia) }]
      : []),
    ...(lasts(glacier, MIN_STORAGE_DAYS.glacierInstantRetrieval)
      ? [{ storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(glacier) }]
      : []),
  ];
}

/**
 * The bucket for recordings, the raw archive, quarantine and oversize bodies: public access
 * blocked, SSE-S3, TLS only, versioned, retained on stack deletion, with server access logs in a
 * bucket of their own. Incomplete multipart uploads are aborted after a day.
 */
export class DataBucket extends Construct {
  public readonly bucket: Bucket;
  public readonly accessLogs: Bucket;

  constructor(scope: Construct, id: string, props: DataBucketProps = {}) {
    super(scope, id);
    this.accessLogs = new Bucket(this, "AccessLogs", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // ACLs off: S3's log delivery is admitted by a bucket policy (the stack's feature flag).
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ expiration: Duration.days(props.retention?.accessLogDays ?? 365) }],
    });
    const retain = props.retention ?? {};
    const expiring = (days: number | undefined) =>
      days === undefined ? {} : { expiration: Duration.days(days) };
    // The archive's rule as before (config refuses a retention before its Glacier IR transition).
    const archived = (prefix: string, days: number | undefined): LifecycleRule => ({
      prefix,
      ...expiring(days),
      transitions: transitionsOf(props.infrequentAccessAfterDays ?? 30, props.glacierAfterDays ?? 180),
    });
    const recordingTransitions = transitionsOf(
      props.recordingsInfrequentAccessAfterDays ?? 30,
      props.recordingsGlacierAfterDays ?? 120,
      retain.recordingsDays,
    );
    this.bucket = new Bucket(this, "Bucket", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: "data-bucket/",
      // No object under 128 KB moves to another class (#59): Infrequent Access and Glacier IR bill
      // it as 128 KB, plus a request per transition, so a 10 KB archive object would cost ~7× more
      // moved. Stated rather than left to the default, which differs by the bucket's creation date.
      transitionDefaultMinimumObjectSize: TransitionDefaultMinimumObjectSize.ALL_STORAGE_CLASSES_128_K,
      lifecycleRules: [
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
        { noncurrentVersionExpiration: Duration.days(retain.noncurrentVersionsDays ?? 30) },
        archived(S3_PREFIX.raw, retain.archiveDays),
        archived(S3_PREFIX.edge, retain.archiveDays),
        archived(S3_PREFIX.quarantine, retain.quarantineDays),
        // Oversize bodies are archived raw once projected; 30 days outlast the DLQ's 14.
        { prefix: S3_PREFIX.oversize, expiration: Duration.days(retain.oversizeDays ?? 30) },
        // The compacted Parquet (a day's archive in one object of MBs) moves as the archive does.
        archived(S3_PREFIX.compact, retain.archiveDays),
        ...(retain.archiveDays === undefined
          ? []
          : [
              // The user sets are the archive's, summed up: kept as long (first seen within it).
              { prefix: S3_PREFIX.users, ...expiring(retain.archiveDays) },
              // What the platform confirmed of an import (#43): the archive's peer, kept as long.
              {
                prefix: S3_PREFIX.imports,
                ...expiring(retain.archiveDays + IMPORT_RECORDS_EXPIRY_GRACE_DAYS),
              },
            ]),
        ...(retain.recordingsDays === undefined && recordingTransitions.length === 0
          ? []
          : [
              {
                prefix: S3_PREFIX.recordings,
                ...expiring(retain.recordingsDays),
                ...(recordingTransitions.length ? { transitions: recordingTransitions } : {}),
              },
            ]),
      ],
    });
  }

  /**
   * Grants `actions` on the objects under `prefixes` to a function, and acknowledges cdk-nag's
   * IAM5 wildcard finding for exactly those prefixes on that function: object keys are made per
   * event or recording, so a prefix is the narrowest grant there is.
   */
  grantObjects(grantee: BackendFunction, actions: string[], prefixes: DataPrefix[]): void {
    grantee.function.addToRolePolicy(
      new PolicyStatement({ actions, resources: prefixes.map((p) => this.bucket.arnForObjects(`${p}*`)) }),
    );
    const stack = Stack.of(this);
    const logicalId = stack.resolve(stack.getLogicalId(this.bucket.node.defaultChild as CfnBucket)) as string;
    for (const prefix of prefixes) {
      Validations.of(grantee.function).acknowledge({
        id: `AwsSolutions::AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/${prefix}*]`,
        reason: `Objects under ${prefix} in the data bucket: the keys are made per event or recording, so the grant is the prefix.`,
      });
    }
  }

  /** Grants `s3:ListBucket` restricted to one prefix (no wildcard resource, so nothing to acknowledge). */
  grantListPrefix(grantee: BackendFunction, prefix: DataPrefix): void {
    grantee.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["s3:ListBucket"],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { "s3:prefix": [`${prefix}*`] } },
      }),
    );
  }
}
