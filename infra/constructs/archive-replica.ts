import { Aspects, Stack, Validations } from "aws-cdk-lib";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { Bucket, CfnBucket } from "aws-cdk-lib/aws-s3";
import { CfnSecret } from "aws-cdk-lib/aws-secretsmanager";
import { Construct, type IConstruct } from "constructs";
import { S3_PREFIX } from "../../shared/platform/constants";

/**
 * What a rebuild in another region needs from the bucket: the raw archive (every table and figure
 * is replayed from it), the quarantine (replayed once its schema accepts it), the import records
 * (what the platform confirmed of an import). Recordings, Athena's results and the derived
 * Parquet and day sets are not copied: they are large, or recomputed.
 */
export const REPLICATED_PREFIXES = [S3_PREFIX.raw, S3_PREFIX.quarantine, S3_PREFIX.imports] as const;

export interface ArchiveReplicaProps {
  /** The data bucket (versioned, as S3 replication requires). */
  readonly source: Bucket;
  /** The region of the copy. */
  readonly region: string;
  /** A versioned bucket of the deployer's in `region`. */
  readonly bucketName: string;
}

/**
 * An opt-in copy, in another region, of what a rebuild replays (S3 replication of
 * `REPLICATED_PREFIXES` to a versioned bucket of the deployer's), and of the secrets the stack
 * generates (Secrets Manager replicas: the credentials the platform delivers with, the management
 * and import keys). Deletes are not replicated: a deletion here (retention, an erasure's rewrite
 * leaves versions) is the copy's own lifecycle's to apply (docs/deploy.md, "Another region").
 */
export class ArchiveReplica extends Construct {
  public readonly role: Role;

  constructor(scope: Construct, id: string, props: ArchiveReplicaProps) {
    super(scope, id);
    const { partition } = Stack.of(this);

    const destination = `arn:${partition}:s3:::${props.bucketName}`;
    this.role = new Role(this, "Role", {
      assumedBy: new ServicePrincipal("s3.amazonaws.com"),
      description: "S3 replication of the raw archive, quarantine and import records to another region",
    });
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ["s3:GetReplicationConfiguration", "s3:ListBucket"],
        resources: [props.source.bucketArn],
      }),
    );
    this.role.addToPolicy(
      new PolicyStatement({
        actions: [
          "s3:GetObjectVersionForReplication",
          "s3:GetObjectVersionAcl",
          "s3:GetObjectVersionTagging",
        ],
        resources: REPLICATED_PREFIXES.map((p) => props.source.arnForObjects(`${p}*`)),
      }),
    );
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ["s3:ReplicateObject", "s3:ReplicateTags"],
        resources: REPLICATED_PREFIXES.map((p) => `${destination}/${p}*`),
      }),
    );
    const stack = Stack.of(this);
    const source = stack.resolve(stack.getLogicalId(props.source.node.defaultChild as CfnBucket)) as string;
    for (const prefix of REPLICATED_PREFIXES)
      for (const resource of [
        `<${source}.Arn>/${prefix}*`,
        `arn:<AWS::Partition>:s3:::${props.bucketName}/${prefix}*`,
      ])
        Validations.of(this.role).acknowledge({
          id: `AwsSolutions::AwsSolutions-IAM5[Resource::${resource}]`,
          reason:
            "S3 replication reads and writes object versions by key: the grant is a replicated prefix of the source or the copy, the narrowest there is.",
        });
    (props.source.node.defaultChild as CfnBucket).replicationConfiguration = {
      role: this.role.roleArn,
      rules: REPLICATED_PREFIXES.map((prefix, priority) => ({
        id: `copy-${prefix.replace(/\/$/, "")}`,
        status: "Enabled",
        priority,
        filter: { prefix },
        deleteMarkerReplication: { status: "Disabled" },
        destination: { bucket: destination },
      })),
    };
    Aspects.of(Stack.of(this)).add(new ReplicateSecrets(props.region));
  }
}

/** Every secret the stack generates gets a replica in the copy's region. */
class ReplicateSecrets {
  constructor(private readonly region: string) {}

  visit(node: IConstruct): void {
    if (node instanceof CfnSecret) node.replicaRegions = [{ region: this.region }];
  }
}
