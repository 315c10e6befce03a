import { Duration, RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import { AnyPrincipal, Effect, PolicyStatement } from "aws-cdk-lib/aws-iam";
import type { IKey } from "aws-cdk-lib/aws-kms";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { CfnSubscription, Topic } from "aws-cdk-lib/aws-sns";
import { SqsSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { filterPolicyOf, type StreamSubscriber } from "../../shared/stream/subscribers";
import { QueueWithDeadLetter } from "./queue-with-dead-letter";

/**
 * The listener switch's item in the apps table (pk `appId`), which `webhook listen` writes and the
 * projector reads (docs/design-and-limits.md, "The stream of facts"): the projector may read it
 * and no other item.
 */
const LISTENER_SWITCH_APP_ID = "_stream";

export interface EventStreamProps {
  /**
   * Encrypts the topic. The alarm topic's key is the one meant here: a second key would cost
   * $1 a month on every deployment, streaming or not, for no separation a reader needs (SNS
   * decrypts before delivering, so no consumer ever holds the key).
   */
  readonly key: IKey;
  /** The declared subscribers (`streamSubscribers`): each gets a queue, its DLQ, a subscription, outputs and alarms. @default - none */
  readonly subscribers?: readonly StreamSubscriber[];
  /**
   * How long a subscriber's queue keeps a fact its consumer has not taken: shorter than
   * `deadLetterRetentionPeriod` (a dead-lettered fact keeps its first enqueue time).
   * @default 10 days (a consumer down for a long weekend loses nothing)
   */
  readonly subscriberRetentionPeriod?: Duration;
  /** A subscriber's consumer may take this long before a received fact shows again. @default 30 seconds (SQS's default; a consumer may change it per receive) */
  readonly subscriberVisibilityTimeout?: Duration;
  /** Receives of a fact before it moves to the subscriber's dead-letter queue. @default 5 */
  readonly subscriberMaxReceiveCount?: number;
  /** How long the dead-letter queues (each subscriber's, and the unpublished facts') keep a message. @default 14 days */
  readonly deadLetterRetentionPeriod?: Duration;
}

/** One declared subscriber, deployed. */
export interface DeployedSubscriber {
  readonly subscriber: StreamSubscriber;
  readonly queues: QueueWithDeadLetter;
}

/**
 * The stream of facts (#41): a standard SNS topic, KMS-encrypted and TLS-only, that the projector
 * publishes every accepted delivery to; the stream's own dead-letter queue for facts whose publish
 * kept failing (their tables are written: `redrive --stream` publishes them again); and, per
 * declared subscriber, an encrypted queue with its dead-letter queue, bound to the topic by its
 * queue policy (`aws:SourceArn`) and subscribed with its filter policy. The topic exists on every
 * deployment, so that `webhook listen --stack` works on any: an idle topic costs nothing.
 */
export class EventStream extends Construct {
  public readonly topic: Topic;
  /** Facts the projector could not publish within its record's receives (`STREAM_UNPUBLISHED_QUEUE_URL`). */
  public readonly unpublished: Queue;
  public readonly subscribers: readonly DeployedSubscriber[];
  /** The topic's key: a publisher other than the projector (`replay --to-stream`, `forget`) uses it through SNS. */
  public readonly key: IKey;

  constructor(scope: Construct, id: string, props: EventStreamProps) {
    super(scope, id);
    this.key = props.key;
    this.topic = new Topic(this, "Topic", {
      masterKey: props.key,
      enforceSSL: true,
      displayName: "Accepted webhook deliveries (the stream of facts)",
    });
    // The stream carries personal data: it leaves only for SQS queues (encrypted, in reach of the
    // account), never an HTTP, e-mail or SMS endpoint, whoever asks.
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: "SubscribeSqsOnly",
        effect: Effect.DENY,
        principals: [new AnyPrincipal()],
        actions: ["sns:Subscribe"],
        resources: [this.topic.topicArn],
        conditions: { StringNotEquals: { "sns:Protocol": "sqs" } },
      }),
    );
    const deadLetterRetentionPeriod = props.deadLetterRetentionPeriod ?? Duration.days(14);
    this.unpublished = new Queue(this, "Unpublished", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: deadLetterRetentionPeriod,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const rule of ["Serverless::Serverless-SQSRedrivePolicy", "AwsSolutions::AwsSolutions-SQS3"])
      Validations.of(this.unpublished).acknowledge({
        id: rule,
        reason:
          "This is a dead-letter queue: the stream's, for facts whose publish kept failing through their record's receives (the projector moves them here; redrive --stream publishes them again).",
      });
    this.subscribers = (props.subscribers ?? []).map((subscriber) =>
      this.subscribe(subscriber, { ...props, deadLetterRetentionPeriod }),
    );
  }

  /** A subscriber's queue and dead-letter queue, subscribed to the topic with its filter policy. */
  private subscribe(
    subscriber: StreamSubscriber,
    props: EventStreamProps & { deadLetterRetentionPeriod: Duration },
  ): DeployedSubscriber {
    const queues = new QueueWithDeadLetter(this, `Subscriber-${subscriber.name}`, {
      visibilityTimeout: props.subscriberVisibilityTimeout ?? Duration.seconds(30),
      maxReceiveCount: props.subscriberMaxReceiveCount ?? 5,
      retentionPeriod: props.subscriberRetentionPeriod ?? Duration.days(10),
      deadLetterRetentionPeriod: props.deadLetterRetentionPeriod,
    });
    // SqsSubscription adds the queue policy (sns.amazonaws.com may SendMessage, only from this
    // topic: aws:SourceArn) and the dead-letter queue's; a fact SNS cannot deliver lands there too.
    const subscription = this.topic.addSubscription(
      new SqsSubscription(queues.queue, {
        rawMessageDelivery: subscriber.rawDelivery ?? true,
        deadLetterQueue: queues.deadLetterQueue,
      }),
    );
    // CDK's typed filters have no `$or`, which lets an erasure notice past a trigger filter.
    const policy = filterPolicyOf(subscriber);
    const cfn = subscription.node.defaultChild;
    if (policy && cfn instanceof CfnSubscription) cfn.filterPolicy = policy;
    return { subscriber, queues };
  }

  /**
   * What the publisher (the projector) may do, and nothing more: publish to this topic (through
   * SNS, the key), move a fact it could not publish to the unpublished queue, and read the
   * listener switch, one item of the apps table.
   *
   * @example stream.grantPublish(projector.function, apps.table)
   */
  public grantPublish(publisher: IFunction, appsTable: ITable): void {
    publisher.addToRolePolicy(
      new PolicyStatement({ actions: ["sns:Publish"], resources: [this.topic.topicArn] }),
    );
    // An encrypted topic's publisher needs the key's data keys; only through SNS.
    publisher.addToRolePolicy(
      new PolicyStatement({
        actions: ["kms:GenerateDataKey", "kms:Decrypt"],
        resources: [this.key.keyArn],
        conditions: { StringEquals: { "kms:ViaService": `sns.${Stack.of(this).region}.amazonaws.com` } },
      }),
    );
    publisher.addToRolePolicy(
      new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [this.unpublished.queueArn] }),
    );
    publisher.addToRolePolicy(
      new PolicyStatement({
        actions: ["dynamodb:GetItem"],
        resources: [appsTable.tableArn],
        conditions: { "ForAllValues:StringEquals": { "dynamodb:LeadingKeys": [LISTENER_SWITCH_APP_ID] } },
      }),
    );
  }

  /**
   * The publisher's environment (the names docs/stream.md and the projector's configuration
   * read): the topic, whether it always publishes (subscribers are declared) or only while a
   * listener's switch is on, the unpublished queue, the apps table of the switch, and the events
   * queue's receives (its last one moves an unpublished fact aside instead of failing it).
   */
  public publisherEnvironment(appsTable: ITable, eventsMaxReceiveCount: number): Record<string, string> {
    return {
      STREAM_TOPIC_ARN: this.topic.topicArn,
      STREAM_ALWAYS_ON: String(this.subscribers.length > 0),
      STREAM_UNPUBLISHED_QUEUE_URL: this.unpublished.queueUrl,
      APPS_TABLE: appsTable.tableName,
      EVENTS_MAX_RECEIVE_COUNT: String(eventsMaxReceiveCount),
    };
  }
}
