import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";
import { Duration, Stack, Validations } from "aws-cdk-lib";
import type { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import {
  Alarm,
  CfnInsightRule,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TreatMissingData,
} from "aws-cdk-lib/aws-cloudwatch";
import { SnsAction } from "aws-cdk-lib/aws-cloudwatch-actions";
import { PolicyStatement, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Key } from "aws-cdk-lib/aws-kms";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import type { ILogGroup } from "aws-cdk-lib/aws-logs";
import { Topic } from "aws-cdk-lib/aws-sns";
import { EmailSubscription } from "aws-cdk-lib/aws-sns-subscriptions";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { QUARANTINE_SPIKE, REFUSALS } from "../../shared/platform/constants";
import { METRICS_NAMESPACE } from "../../shared/platform/observability";
import {
  OUTCOME_METRICS,
  RECORDER_OUTCOMES,
  type ServiceName,
  SILENT_APPS_METRIC,
  TRIGGER_METRICS,
} from "../../shared/platform/outcomes";
import { REFUSAL_ALARM, SILENCE_ALARM } from "../../shared/watchdog/alarms";
import { refusalInsightRule, refusalRuleName } from "../../shared/watchdog/refusal-rule";
import type { EventStream } from "./event-stream";

export interface MonitoringProps {
  readonly api: HttpApi;
  /** Requests the edge's throttle refused (429), Sum per period: any one is alarmed (`WebhookIngest.throttledRequests`). */
  readonly apiThrottled: IMetric;
  /** Each function's errors and throttles are alarmed, by name. */
  readonly functions: Record<string, IFunction>;
  /** Each queue's dead letters and oldest message are alarmed, by name. */
  readonly queues: Record<string, { queue: Queue; deadLetterQueue: Queue }>;
  /** Alarm when a queue's oldest message is older than this. @default 300 */
  readonly queueAgeAlarmSeconds?: number;
  /** Alarm when more than this share of requests answer 5xx over 5 minutes. @default 1 */
  readonly api5xxAlarmPercent?: number;
  /** @default - no subscription: subscribe to `topic` yourself */
  readonly alarmEmail?: string;
  /** Alarm when this many events fail in the projector within 5 minutes. @default 10 */
  readonly projectorFailedAlarmCount?: number;
  /** Alarm when this many recordings fail within 15 minutes. @default 3 */
  readonly recorderFailedAlarmCount?: number;
  /** The ingest's log group: the refusals per username are counted from its lines (#58). @default - no refusal alarm */
  readonly ingestLogs?: ILogGroup;
  /** Graph the scheduled reconciler's outcomes too (when it is deployed). @default false */
  readonly reconciler?: boolean;
}

/**
 * Alarms to an encrypted SNS topic (any message in a DLQ, old messages in a queue, function
 * errors and throttles, any 429 of the edge's throttle, API 5xx rate, a rise in one trigger's
 * quarantine rate) and a dashboard (ingest rate and latency, queue depth,
 * ingest, projector and recorder outcomes).
 */
export class Monitoring extends Construct {
  public readonly topic: Topic;
  /** Encrypts the alarm topic, and the stream's (`EventStream`): one key, paid once. */
  public readonly key: Key;
  public readonly dashboard: Dashboard;
  public readonly alarms: Alarm[] = [];
  private readonly queueAgeAlarmSeconds: number;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.queueAgeAlarmSeconds = props.queueAgeAlarmSeconds ?? 300;
    const key = new Key(this, "TopicKey", {
      enableKeyRotation: true,
      description: "Encrypts the alarm topic and the stream of facts' topic",
    });
    this.key = key;
    // CloudWatch must be able to publish to the encrypted topic: this account's alarms only
    // (aws:SourceAccount, aws:SourceArn), not another account's alarm naming this topic.
    const { account, region, partition } = Stack.of(this);
    key.addToResourcePolicy(
      new PolicyStatement({
        actions: ["kms:Decrypt", "kms:GenerateDataKey*"],
        principals: [new ServicePrincipal("cloudwatch.amazonaws.com")],
        resources: ["*"],
        conditions: {
          StringEquals: { "aws:SourceAccount": account },
          ArnLike: { "aws:SourceArn": `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
        },
      }),
    );
    this.topic = new Topic(this, "Alarms", { masterKey: key, enforceSSL: true });
    if (props.alarmEmail) this.subscribe(props.alarmEmail);
    this.alarmOn(props);
    this.dashboard = this.buildDashboard(props);
  }

  /** E-mails the alarms; undeliverable alarm e-mails are kept in a queue, not lost. */
  private subscribe(email: string): void {
    const undelivered = new Queue(this, "UndeliveredAlarms", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    for (const id of ["Serverless::Serverless-SQSRedrivePolicy", "AwsSolutions::AwsSolutions-SQS3"]) {
      Validations.of(undelivered).acknowledge({
        id,
        reason:
          "This is the dead-letter queue of the alarm e-mail subscription (an SNS redrive target, which cdk-nag does not recognise as a DLQ).",
      });
    }
    this.topic.addSubscription(new EmailSubscription(email, { deadLetterQueue: undelivered }));
  }

  /**
   * An alarm to the topic; missing data (nothing happened) is not breaching. Public: the stack
   * adds the alarms of its options (`infra/production.ts`). Every alarm of the stack also
   * notifies when it recovers, and the deployer's own topic (`alarmsReachEveryDestination`).
   */
  public alarm(name: string, alarmProps: ConstructorParameters<typeof Alarm>[2]): Alarm {
    const created = new Alarm(this, name, {
      treatMissingData: TreatMissingData.NOT_BREACHING,
      ...alarmProps,
    });
    created.addAlarmAction(new SnsAction(this.topic));
    this.alarms.push(created);
    return created;
  }

  /**
   * Alarms on a function's errors (a timeout is one) and throttles. The constructor does it for
   * `props.functions`; a function built after the monitoring (the rollup, which alarms to its topic)
   * is added with this.
   *
   * @example monitoring.watchFunction("Rollup", analytics.rollup.function)
   */
  public watchFunction(name: string, fn: IFunction): void {
    this.alarm(`${name}Errors`, {
      alarmDescription: `The ${name} function failed (an invocation error or a timeout, not a reported batch item).`,
      metric: fn.metricErrors({ period: Duration.minutes(5), statistic: "Sum" }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    this.alarm(`${name}Throttles`, {
      alarmDescription: `The ${name} function was throttled.`,
      metric: fn.metricThrottles({ period: Duration.minutes(5), statistic: "Sum" }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
  }

  /**
   * The stream of facts (#41): an alarm on facts not published (any message in the stream's own
   * dead-letter queue), each subscriber's dead letters and oldest message, and a dashboard row.
   * Called once the stream exists (it is encrypted with this construct's key).
   *
   * @example monitoring.watchStream(stream)
   */
  public watchStream(stream: EventStream): void {
    const perMinute = { period: Duration.minutes(1), statistic: "Maximum" } as const;
    this.alarm("StreamUnpublished", {
      alarmDescription:
        "Facts not published: the projector could not publish them to the stream through every receive of their record, and moved them to the stream's dead-letter queue. Nothing is lost (their tables are written): fix the cause (SNS, KMS or permissions: the projector's WARN lines say which), then npx webhook redrive --stream.",
      metric: stream.unpublished.metricApproximateNumberOfMessagesVisible(perMinute),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    for (const { subscriber, queues } of stream.subscribers) {
      this.alarm(`Subscriber-${subscriber.name}DeadLetters`, {
        alarmDescription: `Facts in the ${subscriber.name} subscriber's dead-letter queue: its consumer failed them at every receive, or SNS could not deliver them. Fix the consumer, then move them back (the SQS console's "Start DLQ redrive").`,
        metric: queues.deadLetterQueue.metricApproximateNumberOfMessagesVisible(perMinute),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      this.alarm(`Subscriber-${subscriber.name}OldestMessage`, {
        alarmDescription: `The ${subscriber.name} subscriber's consumer is falling behind or stopped (its queue keeps a fact 14 days).`,
        metric: queues.queue.metricApproximateAgeOfOldestMessage(perMinute),
        threshold: this.queueAgeAlarmSeconds,
        evaluationPeriods: 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      });
    }
    const sum = { period: Duration.minutes(1), statistic: "Sum" } as const;
    const named = (label: string) => ({ ...perMinute, label });
    this.dashboard.addWidgets(
      new GraphWidget({
        title: "Stream: facts published, delivered, filtered out, failed; not published",
        left: [
          stream.topic.metricNumberOfMessagesPublished({ ...sum, label: "published" }),
          stream.topic.metricNumberOfNotificationsDelivered({ ...sum, label: "delivered" }),
          stream.topic.metricNumberOfNotificationsFilteredOut({ ...sum, label: "filtered out" }),
          stream.topic.metricNumberOfNotificationsFailed({ ...sum, label: "failed" }),
        ],
        right: [stream.unpublished.metricApproximateNumberOfMessagesVisible(named("not published"))],
        width: 8,
      }),
      ...(stream.subscribers.length
        ? [
            new GraphWidget({
              title: "Subscribers: queue depth and dead letters",
              left: stream.subscribers.flatMap(({ subscriber, queues }) => [
                queues.queue.metricApproximateNumberOfMessagesVisible(named(subscriber.name)),
                queues.deadLetterQueue.metricApproximateNumberOfMessagesVisible(
                  named(`${subscriber.name} DLQ`),
                ),
              ]),
              width: 8,
            }),
            new GraphWidget({
              title: "Subscribers: oldest message (s)",
              left: stream.subscribers.map(({ subscriber, queues }) =>
                queues.queue.metricApproximateAgeOfOldestMessage(named(subscriber.name)),
              ),
              width: 8,
            }),
          ]
        : []),
    );
  }

  /** Dead letters, old messages, function errors and throttles, 429s, and the API's 5xx rate. */
  private alarmOn(props: MonitoringProps): void {
    const alarm = this.alarm.bind(this);

    for (const [name, { queue, deadLetterQueue }] of Object.entries(props.queues)) {
      alarm(`${name}DeadLetters`, {
        alarmDescription: `Messages in the ${name} dead-letter queue: events or jobs that failed every retry. Inspect, fix, then npm run redrive.`,
        metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: "Maximum",
        }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      alarm(`${name}OldestMessage`, {
        alarmDescription: `The ${name} queue is falling behind.`,
        metric: queue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(1),
          statistic: "Maximum",
        }),
        threshold: this.queueAgeAlarmSeconds,
        evaluationPeriods: 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      });
    }
    for (const [name, fn] of Object.entries(props.functions)) this.watchFunction(name, fn);
    // A batch whose records all fail does not fail the function (they are reported, and retried):
    // only these outcome metrics see it before the DLQ does, five receives later.
    const outcomeSum = (service: ServiceName, outcome: string, period: Duration) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: OUTCOME_METRICS[service].metric,
        dimensionsMap: { service, outcome },
        statistic: "Sum",
        period,
      });
    alarm("ProjectorFailures", {
      alarmDescription:
        "Events fail in the projector (DynamoDB, S3 or SQS errors): they are retried, and dead-lettered after 5 receives. See the WARN lines 'event failed'.",
      metric: outcomeSum("projector", "failed", Duration.minutes(5)),
      threshold: props.projectorFailedAlarmCount ?? 10,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    const recorderFailures = RECORDER_OUTCOMES.filter((o) => o.startsWith("failed-"));
    alarm("RecorderFailures", {
      alarmDescription:
        "Recordings fail to archive: the reason is on the session and in the WARN lines 'recording failed'.",
      metric: new MathExpression({
        expression: recorderFailures.map((_, i) => `f${i}`).join(" + "),
        usingMetrics: Object.fromEntries(
          recorderFailures.map((o, i) => [`f${i}`, outcomeSum("recorder", o, Duration.minutes(15))]),
        ),
        period: Duration.minutes(15),
        label: "failed recordings",
      }),
      threshold: props.recorderFailedAlarmCount ?? 3,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    // A 429 is a delivery the platform retries at most twice within ~40 s and then drops: the
    // function never saw it, so no other metric or log line knows it was lost.
    alarm("Api429", {
      alarmDescription:
        "The edge's throttle answered 429: the platform retries a delivery at most twice within ~40 s, then it is lost at the source, never archived (resend cannot bring it back; reconcile repairs presence). Raise peakEventsPerSecond (or throttleRateLimit / throttleBurstLimit) to the account's real peak.",
      metric: props.apiThrottled,
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    // A rise in one trigger's quarantine rate: how a change of the platform's payloads shows.
    // One alarm per modelled trigger (its name says which); metric math alarms take 10 metrics at most.
    const window = Duration.minutes(QUARANTINE_SPIKE.windowMinutes);
    const perTrigger = (metricName: string, trigger: string) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { service: "projector", trigger },
        statistic: "Sum",
        period: window,
      });
    for (const trigger of [...KNOWN_TRIGGERS].sort()) {
      alarm(`Quarantine-${trigger}`, {
        alarmDescription: `${trigger}: more than ${QUARANTINE_SPIKE.sharePercent}% of at least ${QUARANTINE_SPIKE.minEvents} events quarantined within ${QUARANTINE_SPIKE.windowMinutes} minutes: the platform's payload may have changed. See npm run query -- quarantine, then replay --quarantine once the schema accepts it.`,
        metric: new MathExpression({
          expression: `IF(events >= ${QUARANTINE_SPIKE.minEvents}, 100 * quarantined / events, 0)`,
          usingMetrics: {
            events: perTrigger(TRIGGER_METRICS.events, trigger),
            quarantined: perTrigger(TRIGGER_METRICS.quarantined, trigger),
          },
          period: window,
          label: `${trigger} quarantined %`,
        }),
        threshold: QUARANTINE_SPIKE.sharePercent,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      });
    }
    this.alarmOnTheEdge(props.ingestLogs);
    const requests = props.api.metricCount({ period: Duration.minutes(5), statistic: "Sum" });
    const serverErrors = props.api.metricServerError({ period: Duration.minutes(5), statistic: "Sum" });
    alarm("Api5xxRate", {
      alarmDescription:
        "Deliveries are answered 5xx: the platform retries at most twice, so events are at risk.",
      metric: new MathExpression({
        expression: "IF(requests > 0, 100 * errors / requests, 0)",
        usingMetrics: { requests, errors: serverErrors },
        period: Duration.minutes(5),
        label: "5xx %",
      }),
      threshold: props.api5xxAlarmPercent ?? 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    });
  }

  /**
   * The edge is watched (#52, #58): one alarm on the apps silent now (the rollup's `SilentApps`,
   * one value a tick: never a metric or alarm per app), and one on refusals per known username (a
   * Contributor Insights rule over the ingest's 'delivery refused' lines: a credential changed by
   * hand on the platform's side, however small its app). Which apps, and since when: the rollup's
   * WARN line 'apps silent', `npx webhook apps --silent|--refused`.
   */
  private alarmOnTheEdge(ingestLogs: ILogGroup | undefined): void {
    this.alarm("SilentApps", {
      alarmDescription:
        "Apps stopped sending: no delivery for longer than their own history makes likely (docs/operating.md, 'Silent apps'). npx webhook apps --silent --stack <stack> says which and since when; npx webhook apps --check --stack <stack> reads their webhooks on the platform (disabled, repointed, a username refused) and says what to run.",
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: SILENT_APPS_METRIC,
        dimensionsMap: { service: "rollup" },
        statistic: "Maximum",
        period: Duration.minutes(SILENCE_ALARM.periodMinutes),
      }),
      threshold: SILENCE_ALARM.threshold,
      evaluationPeriods: SILENCE_ALARM.evaluationPeriods,
      datapointsToAlarm: SILENCE_ALARM.datapointsToAlarm,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    if (!ingestLogs) return;
    // Refusals per username (#58): a Contributor Insights rule over the ingest's 'delivery refused'
    // lines of usernames the deployment knows, and an alarm on its largest contributor.
    const ruleName = refusalRuleName(Stack.of(this).stackName);
    const rule = new CfnInsightRule(this, "RefusedUsernames", {
      ruleName,
      ruleState: "ENABLED",
      ruleBody: JSON.stringify(refusalInsightRule(ingestLogs.logGroupName)),
    });
    const window = Duration.minutes(REFUSAL_ALARM.periodMinutes);
    this.alarm("RefusedDeliveries", {
      alarmDescription: `A username this deployment knows was refused with 401 (at least ${REFUSALS.minRefusals} in ${REFUSALS.windowMinutes} minutes, whatever its share of the traffic): a webhook delivers with a password the ingest does not accept, and the platform drops each delivery after its retries (~40 s). npx webhook apps --refused --stack <stack> names the usernames and their apps; npx webhook connect --stack <stack> --app <appId> sets the webhook's credential again.`,
      metric: new MathExpression({
        expression: `INSIGHT_RULE_METRIC('${ruleName}', 'MaxContributorValue')`,
        usingMetrics: {},
        period: window,
        label: "refusals of the most refused known username",
      }),
      threshold: REFUSALS.minRefusals,
      evaluationPeriods: REFUSAL_ALARM.evaluationPeriods,
      datapointsToAlarm: REFUSAL_ALARM.datapointsToAlarm,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    this.node.findChild("RefusedDeliveries").node.addDependency(rule);
  }

  /** Ingest rate, latency and outcomes, queue depth, projector and recorder outcomes. */
  private buildDashboard(props: MonitoringProps): Dashboard {
    const requests = props.api.metricCount({ period: Duration.minutes(5), statistic: "Sum" });
    // Every outcome of each function's vocabulary: what the code can emit is what is graphed.
    const outcome = (service: ServiceName) =>
      OUTCOME_METRICS[service].outcomes.map(
        (o) =>
          new Metric({
            namespace: METRICS_NAMESPACE,
            metricName: OUTCOME_METRICS[service].metric,
            dimensionsMap: { service, outcome: o },
            statistic: "Sum",
            period: Duration.minutes(1),
            label: o,
          }),
      );
    return new Dashboard(this, "Dashboard", {
      widgets: [
        [
          new GraphWidget({
            title: "Ingest requests (and 429s of the throttle)",
            left: [requests],
            right: [props.apiThrottled],
            width: 8,
          }),
          new GraphWidget({
            title: "Ingest latency (ms)",
            left: [
              props.api.metricLatency({ statistic: "p50", period: Duration.minutes(1) }),
              props.api.metricLatency({ statistic: "p99", period: Duration.minutes(1) }),
            ],
            width: 8,
          }),
          new GraphWidget({
            title: "Ingest outcomes",
            // Accepted events are the events queue's sends; the other outcomes are metrics of the ingest.
            left: [
              ...(props.queues.Events
                ? [
                    props.queues.Events.queue.metricNumberOfMessagesSent({
                      label: "accepted",
                      statistic: "Sum",
                      period: Duration.minutes(1),
                    }),
                  ]
                : []),
              ...outcome("ingest").filter((m) => m.label !== "accepted"),
            ],
            width: 8,
          }),
        ],
        [
          new GraphWidget({
            title: "Queue depth",
            left: Object.entries(props.queues).flatMap(([name, q]) => [
              q.queue.metricApproximateNumberOfMessagesVisible({ label: name }),
              q.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ label: `${name} DLQ` }),
            ]),
            width: 8,
          }),
          // Every message carries its app as its message group (fair queues): these show a noisy
          // app being held back while the other apps' messages keep moving.
          new GraphWidget({
            title: "Fair queues: noisy apps, quiet apps' oldest message (s)",
            left: Object.entries(props.queues).map(([name, q]) =>
              q.queue.metric("ApproximateNumberOfNoisyGroups", {
                label: `${name} noisy apps`,
                statistic: "Maximum",
                period: Duration.minutes(1),
              }),
            ),
            right: Object.entries(props.queues).map(([name, q]) =>
              q.queue.metric("ApproximateAgeOfOldestMessageInQuietGroups", {
                label: `${name} quiet apps' oldest`,
                statistic: "Maximum",
                period: Duration.minutes(1),
              }),
            ),
            width: 8,
          }),
        ],
        [
          new GraphWidget({
            title: "Projector outcomes",
            left: outcome("projector"),
            width: 8,
          }),
          new GraphWidget({
            title: "Recorder outcomes",
            left: outcome("recorder"),
            width: 8,
          }),
        ],
        ...(props.reconciler
          ? [[new GraphWidget({ title: "Reconciled users", left: outcome("reconciler"), width: 8 })]]
          : []),
      ],
    });
  }
}
