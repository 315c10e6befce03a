import { RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import type { Table } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret } from "aws-cdk-lib/aws-secretsmanager";
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from "aws-cdk-lib/custom-resources";
import { Construct } from "constructs";
import { APP_RECORD } from "../../shared/apps/records";
import { APPS_TABLE } from "../../shared/platform/tables";
import { declaredTable } from "./projection-tables";

/** The id CDK gives the singleton function behind every `AwsCustomResource` of a stack. */
const AWS_CUSTOM_RESOURCE_PROVIDER_ID = "AWS679f53fac002430cb0da5b7982bd2287";

const PROVIDER_ACKNOWLEDGEMENTS: Record<string, string> = {
  "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]":
    "CDK's AwsCustomResource provider writes its own logs with the basic execution role; its table access is the one statement granted beside it.",
  "Serverless::Serverless-LambdaDefaultMemorySize":
    "CDK's AwsCustomResource provider runs one SDK call at deploy; its default memory is enough.",
  "Serverless::Serverless-LambdaDLQ":
    "Invoked by CloudFormation at deploy: a failure fails the deployment, which is the report.",
  "Serverless::Serverless-LambdaTracing": "Runs only at deploy: nothing to trace.",
};

/** BatchWriteItem's limit: one seeding call per this many app ids. */
const SEED_CHUNK = 25;

export interface AppSettingsProps {
  /**
   * App ids written as allowed at deploy (the `allowedAppIds` context key): a seed, kept when the
   * key later changes (an app is taken off by deleting its record, README "Apps"). @default - none
   */
  readonly seedAllowedAppIds?: readonly string[];
  /** Retention of the seed's custom resource provider's log group. @default one month */
  readonly logRetention?: RetentionDays;
}

/**
 * The per-app settings: the apps table (`APPS_TABLE`: which apps may deliver, the webhook
 * `connect` made for each), the platform's management API key and secret, and each app's data
 * import address and API key, which only the operator's tools read (`connect`,
 * `rotate-credentials`, `import`): no function of the pipeline is granted either.
 */
export class AppSettings extends Construct {
  public readonly table: Table;
  /** `{"url":"…","key":"…","secret":"…"}`, filled in by the deployer (README "Connect"). */
  public readonly managementSecret: Secret;
  /**
   * Each app's data import address and API key, `{"<appId>":{"url":"<import_url>","apiKey":"…"}}`,
   * filled in by the deployer for `npx webhook import --stack` (#43; docs/operating.md "Importing").
   */
  public readonly importSecret: Secret;

  constructor(scope: Construct, id: string, props: AppSettingsProps = {}) {
    super(scope, id);
    // A few reads per app per ingest container and hour: on demand costs cents.
    this.table = declaredTable(this, "Table", APPS_TABLE);
    this.managementSecret = new Secret(this, "ManagementApi", {
      description:
        'The platform management API: {"url":"<management_url>","key":"<key>","secret":"<secret>"} (operator tools only)',
    });
    Validations.of(this.managementSecret).acknowledge({
      id: "AwsSolutions::AwsSolutions-SMG4",
      reason:
        "The platform's operator issues the management key and secret; they cannot be rotated by a Lambda. The deployer stores them here.",
    });
    this.importSecret = new Secret(this, "ImportApi", {
      description:
        'The platform data import API per app: {"<appId>":{"url":"<import_url>","apiKey":"<key>"}} (operator tools only: npx webhook import)',
    });
    Validations.of(this.importSecret).acknowledge({
      id: "AwsSolutions::AwsSolutions-SMG4",
      reason:
        "The platform issues each app's API key (its dashboard); a Lambda cannot rotate it. The deployer stores it here, for the operator's import only.",
    });
    this.seed(props.seedAllowedAppIds ?? [], props.logRetention ?? RetentionDays.ONE_MONTH);
  }

  /** One custom resource per 25 ids: a BatchWriteItem of their `allowed` records at create and update. */
  private seed(appIds: readonly string[], retention: RetentionDays): void {
    if (appIds.length === 0) return;
    // The provider's own log group, with the deployment's retention (Lambda's default group keeps
    // its logs forever); one for the provider, which every seed shares.
    const logGroup = new LogGroup(this, "SeedLogs", { retention, removalPolicy: RemovalPolicy.DESTROY });
    for (let i = 0; i < appIds.length; i += SEED_CHUNK) {
      const items = appIds.slice(i, i + SEED_CHUNK).map((appId) => ({
        PutRequest: {
          Item: {
            [APPS_TABLE.partitionKey.name]: { S: appId },
            [APPS_TABLE.sortKey?.name ?? "record"]: { S: APP_RECORD.allowed },
            by: { S: "allowedAppIds" },
          },
        },
      }));
      const call = {
        service: "DynamoDB",
        action: "batchWriteItem",
        parameters: { RequestItems: { [this.table.tableName]: items } },
        physicalResourceId: PhysicalResourceId.of(`allowed-apps-seed-${i / SEED_CHUNK}`),
      };
      new AwsCustomResource(this, `SeedAllowed${i / SEED_CHUNK}`, {
        onCreate: call,
        onUpdate: call,
        installLatestAwsSdk: false,
        logGroup,
        policy: AwsCustomResourcePolicy.fromStatements([
          new PolicyStatement({ actions: ["dynamodb:BatchWriteItem"], resources: [this.table.tableArn] }),
        ]),
      });
    }
    // The custom resources' provider: one function per stack, that CDK names and builds.
    const provider = Stack.of(this).node.tryFindChild(AWS_CUSTOM_RESOURCE_PROVIDER_ID);
    if (provider)
      for (const [id, reason] of Object.entries(PROVIDER_ACKNOWLEDGEMENTS))
        Validations.of(provider).acknowledge({ id, reason });
  }

  /** The ingest's read: GetItem on the apps table, nothing else. */
  grantAllowlistRead(grantee: IFunction): void {
    grantee.addToRolePolicy(
      new PolicyStatement({ actions: ["dynamodb:GetItem"], resources: [this.table.tableArn] }),
    );
  }
}
