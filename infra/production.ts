import {
  Annotations,
  Aspects,
  CfnOutput,
  CfnResource,
  Duration,
  type IAspect,
  RemovalPolicy,
  type Stack,
} from "aws-cdk-lib";
import { CfnMicrosoftTeamsChannelConfiguration, SlackChannelConfiguration } from "aws-cdk-lib/aws-chatbot";
import { CfnAlarm, ComparisonOperator, type MathExpression } from "aws-cdk-lib/aws-cloudwatch";
import { CfnTable, Operation, type Table } from "aws-cdk-lib/aws-dynamodb";
import { Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import type { CfnFunction } from "aws-cdk-lib/aws-lambda";
import type { Bucket, CfnBucket } from "aws-cdk-lib/aws-s3";
import { Topic } from "aws-cdk-lib/aws-sns";
import type { IConstruct } from "constructs";
import { type DeploymentConfig, SOURCE_QUEUE_RETENTION_DAYS } from "./config";
import { ArchiveReplica } from "./constructs/archive-replica";
import type { BackendFunction } from "./constructs/backend-function";
import type { Monitoring } from "./constructs/monitoring";
import type { ProjectionTables } from "./constructs/projection-tables";
import type { QueueWithDeadLetter } from "./constructs/queue-with-dead-letter";
import type { WebhookIngest } from "./constructs/webhook-ingest";
import { alarmDestinationKeys, type ExistingResources } from "./production-config";

/**
 * The resource types that hold data or what reaches it, retained when the stack is deleted or a
 * resource is replaced: the tables, the bucket, every queue (the events queue holds deliveries
 * acknowledged and not yet projected; a subscriber's, facts its consumer has not taken), the
 * secrets (without the credentials every app's delivery is a 401), the keys.
 */
export const RETAINED_TYPES = [
  "AWS::DynamoDB::Table",
  "AWS::S3::Bucket",
  "AWS::SQS::Queue",
  "AWS::SecretsManager::Secret",
  "AWS::KMS::Key",
] as const;

/**
 * What survives a `cdk destroy`, a stage rename or a replacement: every resource of
 * `RETAINED_TYPES` retained, whichever construct made it (one rule, so a construct added later is
 * covered too), and DynamoDB's deletion protection on every table (`tableDeletionProtection`).
 */
class KeepData implements IAspect {
  constructor(private readonly deletionProtection: boolean) {}

  visit(node: IConstruct): void {
    if (!(node instanceof CfnResource)) return;
    if ((RETAINED_TYPES as readonly string[]).includes(node.cfnResourceType))
      node.applyRemovalPolicy(RemovalPolicy.RETAIN);
    if (node instanceof CfnTable) node.deletionProtectionEnabled = this.deletionProtection;
  }
}

/**
 * Every alarm of the stack notifies every destination, when it fires and when it recovers (an OK
 * action: a person told of a fire wants to know it is out), whichever construct made it.
 */
class AlarmsReachEveryDestination implements IAspect {
  constructor(private readonly topicArns: string[]) {}

  visit(node: IConstruct): void {
    if (!(node instanceof CfnAlarm)) return;
    node.alarmActions = [...this.topicArns];
    node.okActions = [...this.topicArns];
  }
}

export interface ProductionProps {
  readonly config: DeploymentConfig;
  readonly monitoring: Monitoring;
  readonly tables: ProjectionTables;
  readonly queues: Record<"Events" | "Recordings", QueueWithDeadLetter>;
  readonly ingest: BackendFunction;
  readonly edge: WebhookIngest;
  /** What `existingResources` may name: every table by its id, and the data bucket. */
  readonly named: { tables: Record<string, Table>; dataBucket: Bucket };
}

/**
 * The production settings of the stack (#60): what survives a deletion, where the alarms go, the
 * alarms of the options (provisioned capacity's throttling, a message about to expire), the
 * ingest's reserved concurrency, and a warning for each choice that leaves something open.
 */
export function applyProductionSettings(stack: Stack, props: ProductionProps): void {
  const { config, monitoring } = props;
  Aspects.of(stack).add(new KeepData(config.tableDeletionProtection));
  const deployerTopic = config.alarmTopicArn
    ? Topic.fromTopicArn(stack, "DeployerAlarmTopic", config.alarmTopicArn)
    : undefined;
  Aspects.of(stack).add(
    new AlarmsReachEveryDestination([
      monitoring.topic.topicArn,
      ...(deployerTopic ? [deployerTopic.topicArn] : []),
    ]),
  );
  chatDestinations(stack, config, monitoring);
  const destinations = alarmDestinationKeys(config);
  new CfnOutput(stack, "AlarmDestinations", {
    value: destinations.length ? destinations.join(", ") : "none",
    description: "where the alarms go (docs/deploy.md, Where the alarms go)",
  });
  if (destinations.length === 0)
    Annotations.of(stack).addWarningV2(
      "webhook:alarms-none",
      "alarms=none: the alarms reach nobody. Give alarmEmail, alarmTopicArn, alarmSlack or alarmTeams (docs/deploy.md, Where the alarms go).",
    );
  if (!config.webhookPathToken)
    Annotations.of(stack).addWarningV2(
      "webhook:no-path-token",
      "webhookPathToken is not set: the webhook URL is /webhook, and only the API's host keeps it from strangers. Set -c webhookPathToken=$(openssl rand -hex 16) (docs/deploy.md, The door).",
    );
  if (config.capacityMode === "provisioned") alarmOnThrottledTables(monitoring, props.tables);
  alarmBeforeExpiry(monitoring, props.queues);
  if (props.edge.domainName)
    new CfnOutput(stack, "CustomDomainTarget", {
      value: props.edge.domainName.regionalDomainName,
      description: `the CNAME (or alias) target of ${config.customDomainName}`,
    });
  if (config.existingResources) nameExisting(props.named, config.existingResources);
  if (config.replicaRegion && config.replicaBucketName)
    new ArchiveReplica(stack, "Replica", {
      source: props.named.dataBucket,
      region: config.replicaRegion,
      bucketName: config.replicaBucketName,
    });
  if (config.ingestReservedConcurrency !== undefined)
    (props.ingest.function.node.defaultChild as CfnFunction).reservedConcurrentExecutions =
      config.ingestReservedConcurrency;
}

/** AWS Chatbot to Slack or Teams: the alarm topic is the channel's notification topic. */
function chatDestinations(stack: Stack, config: DeploymentConfig, monitoring: Monitoring): void {
  if (config.alarmSlack)
    new SlackChannelConfiguration(stack, "AlarmsSlack", {
      slackChannelConfigurationName: `${stack.stackName}-alarms`,
      slackWorkspaceId: config.alarmSlack.workspaceId,
      slackChannelId: config.alarmSlack.channelId,
      notificationTopics: [monitoring.topic],
    });
  if (config.alarmTeams) {
    // Notifications only: the role Chatbot assumes holds no permission.
    const role = new Role(stack, "AlarmsTeamsRole", {
      assumedBy: new ServicePrincipal("chatbot.amazonaws.com"),
      description: "AWS Chatbot's role for the alarms channel: notifications only, no permission",
    });
    new CfnMicrosoftTeamsChannelConfiguration(stack, "AlarmsTeams", {
      configurationName: `${stack.stackName}-alarms`,
      iamRoleArn: role.roleArn,
      teamId: config.alarmTeams.teamId,
      teamsTenantId: config.alarmTeams.tenantId,
      teamsChannelId: config.alarmTeams.channelId,
      snsTopicArns: [monitoring.topic.topicArn],
    });
  }
}

/**
 * Provisioned mode: any throttled request on a projection table (its indexes' shortfalls
 * throttle the table's writes). The SDK retries it; a batch that stays throttled is retried by
 * the queue, then dead-lettered.
 */
function alarmOnThrottledTables(monitoring: Monitoring, tables: ProjectionTables): void {
  const operations = [
    Operation.GET_ITEM,
    Operation.BATCH_GET_ITEM,
    Operation.PUT_ITEM,
    Operation.UPDATE_ITEM,
    Operation.QUERY,
  ];
  for (const [id, table] of Object.entries(tables.tables))
    monitoring.alarm(`${id}Throttled`, {
      alarmDescription: `Requests to the ${id} table were throttled: provisioned capacity (or its index's) is short and auto scaling has not caught up. Raise capacityMinWriteUnits / capacityMinReadUnits, or switch to capacityMode=on-demand.`,
      metric: table.metricThrottledRequestsForOperations({
        operations,
        period: Duration.minutes(5),
      }) as MathExpression,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
}

/**
 * A message of the events or recordings queue a day before SQS deletes it: an expired message
 * never reaches the dead-letter queue (it is gone, not failed), so this is the last warning.
 */
function alarmBeforeExpiry(
  monitoring: Monitoring,
  queues: Record<"Events" | "Recordings", QueueWithDeadLetter>,
): void {
  const seconds = (SOURCE_QUEUE_RETENTION_DAYS - 1) * 86_400;
  for (const [name, { queue }] of Object.entries(queues))
    monitoring.alarm(`${name}ExpiresSoon`, {
      alarmDescription: `The ${name} queue's oldest message is ${SOURCE_QUEUE_RETENTION_DAYS - 1} days old: SQS deletes it a day later (${SOURCE_QUEUE_RETENTION_DAYS} days), and an expired message never reaches the dead-letter queue. Fix the consumer now (its Errors and OldestMessage alarms say why), or raise its concurrency.`,
      metric: queue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(5),
        statistic: "Maximum",
      }),
      threshold: seconds,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
}

/**
 * Deploy onto the tables and bucket a deleted stack left (`existingResources`): each is given the
 * name it has, so `cdk deploy --import-existing-resources` imports it (CloudFormation imports a
 * resource by its custom name) instead of creating an empty one. Only on a new stack: naming a
 * resource of a running stack replaces it (docs/deploy.md, "What survives").
 */
function nameExisting(named: ProductionProps["named"], existing: ExistingResources): void {
  for (const [id, name] of Object.entries(existing.tables ?? {})) {
    const table = named.tables[id];
    if (!table)
      throw new Error(`existingResources.tables: no table ${id} (${Object.keys(named.tables).join(", ")})`);
    (table.node.defaultChild as CfnTable).tableName = name;
  }
  if (existing.dataBucket) (named.dataBucket.node.defaultChild as CfnBucket).bucketName = existing.dataBucket;
}
