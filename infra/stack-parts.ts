import { Duration, Stack, Validations } from "aws-cdk-lib";
import { Rule, Schedule } from "aws-cdk-lib/aws-events";
import { LambdaFunction } from "aws-cdk-lib/aws-events-targets";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { RetentionDays } from "aws-cdk-lib/aws-logs";
import { type ISecret, Secret } from "aws-cdk-lib/aws-secretsmanager";
import { reconcilerEnvironment } from "../shared/config/function-environment";
import { S3_PREFIX } from "../shared/platform/constants";
import { FUNCTION_ENTRIES } from "./bundling";
import type { DeploymentConfig } from "./config";
import type { AppSettings } from "./constructs/app-settings";
import { BackendFunction } from "./constructs/backend-function";
import type { DataBucket } from "./constructs/data-bucket";
import type { EventStream } from "./constructs/event-stream";
import type { ProjectionTables } from "./constructs/projection-tables";
import type { QueueWithDeadLetter } from "./constructs/queue-with-dead-letter";

/*
 * The stack's parts that stand on their own (infra/stack.ts wires them): what the functions are
 * wired to, the opt-in reconciler, and the one way a function reads a secret.
 */

/** What the functions are wired to: built first, then handed to each function's builder. */
export interface Resources {
  config: DeploymentConfig;
  logRetention: RetentionDays;
  data: DataBucket;
  tables: ProjectionTables;
  events: QueueWithDeadLetter;
  recordings: QueueWithDeadLetter;
  apps: AppSettings;
}

/**
 * Opt-in (`reconcileEveryMinutes`): a scheduled function that reconciles the presence of the
 * `reconcileApps` with the platform's user listing, keys from the API-keys secret.
 */
export function addReconciler(
  scope: Stack,
  { config, logRetention, tables, data, apps }: Resources,
  stream: EventStream,
): BackendFunction | undefined {
  if (config.reconcileEveryMinutes === undefined) return undefined;
  if (!config.recordingApiKeysSecretArn || Object.keys(config.reconcileApps).length === 0)
    throw new Error(
      'reconcileEveryMinutes needs recordingApiKeysSecretArn (the apps\' API keys) and reconcileApps ({"<appId>":"us|eu|in"})',
    );
  const apiKeys = Secret.fromSecretCompleteArn(scope, "ReconcileApiKeys", config.recordingApiKeysSecretArn);
  const reconciler = new BackendFunction(scope, "Reconciler", {
    service: "reconciler",
    invokedBy: "schedule",
    entry: FUNCTION_ENTRIES.reconciler,
    description: "Reconciles presence with the platform's user listing",
    memorySize: 256,
    timeout: Duration.minutes(5),
    logRetention,
    environment: reconcilerEnvironment({
      presenceTable: tables.names.presence,
      apiKeysSecretId: apiKeys.secretArn,
      apps: config.reconcileApps,
      dataBucket: data.bucket.bucketName,
    }),
  });
  // Its changes reach the stream (#57 item 4): archived under reconcile/, then published as the
  // projector publishes (the same topic, switch and unpublished queue).
  data.grantObjects(reconciler, ["s3:PutObject"], [S3_PREFIX.reconcile]);
  stream.grantPublish(reconciler.function, apps.table);
  for (const [name, value] of Object.entries(
    stream.publisherEnvironment(apps.table, config.eventsMaxReceiveCount),
  ))
    if (name !== "EVENTS_MAX_RECEIVE_COUNT") reconciler.function.addEnvironment(name, value);
  tables.grantItemReadWrite(reconciler.function, ["Presence"]);
  reconciler.function.addToRolePolicy(
    new PolicyStatement({
      actions: ["dynamodb:Query"],
      resources: [`${tables.tables.Presence.tableArn}/index/online`],
    }),
  );
  readSecret(reconciler, apiKeys, config.secretsKmsKeyArn);
  const schedule = new Rule(scope, "ReconcileSchedule", {
    description: "Reconciles presence with the platform's user listing",
    schedule: Schedule.rate(Duration.minutes(config.reconcileEveryMinutes)),
    targets: [new LambdaFunction(reconciler.function, { retryAttempts: 0 })],
  });
  Validations.of(schedule).acknowledge({
    id: "Serverless::Serverless-EventBusDLQ",
    reason:
      "A schedule tick carries no data: a missed one is superseded by the next, which re-reads the platform's listing. Nothing is lost to dead-letter.",
  });
  return reconciler;
}

/**
 * `secretsmanager:GetSecretValue` on one secret (CDK's `grantRead` adds DescribeSecret, which the
 * functions never call), and `kms:Decrypt` through Secrets Manager when an imported secret is
 * encrypted with a customer-managed key (`secretsKmsKeyArn`).
 */
export function readSecret(fn: BackendFunction, secret: ISecret, kmsKeyArn: string | undefined): void {
  fn.function.addToRolePolicy(
    new PolicyStatement({ actions: ["secretsmanager:GetSecretValue"], resources: [secret.secretArn] }),
  );
  if (kmsKeyArn)
    fn.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["kms:Decrypt"],
        resources: [kmsKeyArn],
        conditions: {
          StringEquals: { "kms:ViaService": `secretsmanager.${Stack.of(fn).region}.amazonaws.com` },
        },
      }),
    );
}
