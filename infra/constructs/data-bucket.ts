import { Duration, RemovalPolicy } from "aws-cdk-lib";
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  ObjectOwnership,
  StorageClass,
} from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import { S3_PREFIX } from "../../shared/platform/constants";

export interface DataBucketProps {
  /** Days before raw archive and quarantine objects move to Infrequent Access. */
  readonly infrequentAccessAfterDays: number;
  /** Days before they move to Glacier Instant Retrieval. */
  readonly glacierAfterDays: number;
}

/**
 * The bucket for recordings, the raw archive, quarantine and oversize bodies: public access
 * blocked, SSE-S3, TLS only, versioned, retained on stack deletion, with server access logs in a
 * bucket of their own. Incomplete multipart uploads are aborted after a day.
 */
export class DataBucket extends Construct {
  public readonly bucket: Bucket;
  public readonly accessLogs: Bucket;

  constructor(scope: Construct, id: string, props: DataBucketProps) {
    super(scope, id);
    this.accessLogs = new Bucket(this, "AccessLogs", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_PREFERRED,
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ expiration: Duration.days(365) }],
    });
    const archived = (prefix: string) => ({
      prefix,
      transitions: [
        {
          storageClass: StorageClass.INFREQUENT_ACCESS,
          transitionAfter: Duration.days(props.infrequentAccessAfterDays),
        },
        {
          storageClass: StorageClass.GLACIER_INSTANT_RETRIEVAL,
          transitionAfter: Duration.days(props.glacierAfterDays),
        },
      ],
    });
    this.bucket = new Bucket(this, "Bucket", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: "data-bucket/",
      lifecycleRules: [
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
        { noncurrentVersionExpiration: Duration.days(30) },
        archived(S3_PREFIX.raw),
        archived(S3_PREFIX.quarantine),
        // Oversize bodies are archived raw once projected; 30 days outlast the DLQ's 14.
        { prefix: S3_PREFIX.oversize, expiration: Duration.days(30) },
      ],
    });
  }
}
