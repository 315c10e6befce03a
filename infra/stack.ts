import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import { CfnOutput, Duration, Stack, type StackProps, Validations } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { SystemLogLevel } from "aws-cdk-lib/aws-lambda";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import { type ISecret, Secret } from "aws-cdk-lib/aws-secretsmanager";
import type { IQueue } from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import {
  ingestEnvironment,
  projectorEnvironment,
  recorderEnvironment,
} from "../shared/config/function-environment";
import { S3_PREFIX } from "../shared/platform/constants";
import { EVENTS_QUEUE, RECORDINGS_QUEUE, VISIBILITY_FACTOR } from "../shared/platform/queues";
import { tableOutput } from "../shared/platform/tables";
import { STREAM_OUTPUTS, subscriberOutputs } from "../shared/stream/subscribers";
import { FUNCTION_ENTRIES } from "./bundling";
import {
  type DeploymentConfig,
  itemExpiryDays,
  restrictsApps,
  SOURCE_QUEUE_RETENTION_DAYS,
  streamFactsRetentionDays,
  tableCapacity,
} from "./config";
import { ActivityAnalytics } from "./constructs/activity-analytics";
import { AppSettings } from "./constructs/app-settings";
import { BackendFunction } from "./constructs/backend-function";
import { DataBucket } from "./constructs/data-bucket";
import { EventStream } from "./constructs/event-stream";
import { Monitoring } from "./constructs/monitoring";
import { ProjectionTables } from "./constructs/projection-tables";
import { QueueWithDeadLetter } from "./constructs/queue-with-dead-letter";
import { WebhookIngest } from "./constructs/webhook-ingest";
import { applyProductionSettings } from "./production";
import { customDomain } from "./production-config";
import { addReconciler, type Resources, readSecret } from "./stack-parts";

/** The ingest runs once per event: Lambda's start and report lines would be ~500 bytes of logs per event. */
export const INGEST_SYSTEM_LOG_LEVEL = SystemLogLevel.WARN;

export interface WebhookBackendStackProps extends StackProps {
  readonly config: DeploymentConfig;
}

/** Function timeouts, and why. */
const TIMEOUTS = {
  // The platform waits 2 s for an answer; a cold start plus one SendMessage is well under that.
  ingest: Duration.seconds(10),
  // A batch of events: a few DynamoDB round trips each, plus one S3 PUT for the raw archive.
  projector: Duration.seconds(EVENTS_QUEUE.consumerTimeoutSeconds),
  // One recording of up to 5 GiB: the recorder's own deadline (a minute less) stops it before this.
  recorder: Duration.seconds(RECORDINGS_QUEUE.consumerTimeoutSeconds),
};

/**
 * The Basic-auth credentials: generated (a username and a 32-character alphanumeric password, as
 * the platform allows), or imported. Never a plaintext value in the template.
 */
function webhookCredentials(scope: Construct, arn: string | undefined): ISecret {
  if (arn) return Secret.fromSecretCompleteArn(scope, "WebhookCredentials", arn);
  const secret = new Secret(scope, "WebhookCredentials", {
    description: "HTTP Basic credentials the platform uses for webhook deliveries",
    generateSecretString: {
      secretStringTemplate: JSON.stringify({ username: "platform-webhook" }),
      generateStringKey: "password",
      passwordLength: 32,
      excludePunctuation: true,
      includeSpace: false,
    },
  });
  Validations.of(secret).acknowledge({
    id: "AwsSolutions::AwsSolutions-SMG4",
    reason:
      "The credentials must also be changed in the platform's webhook settings, by hand: rotation is a two-step change the credential list supports (old and new pair valid together), not a Lambda rotation.",
  });
  return secret;
}

/**
 * The whole backend in one stack: the webhook edge, the events and recordings queues, the
 * projector and recorder, the tables, the data bucket, secrets, alarms and a dashboard. Each
 * construct grants what it owns and acknowledges the cdk-nag findings of its own grants.
 */

export class WebhookBackendStack extends Stack {
  constructor(scope: Construct, id: string, props: WebhookBackendStackProps) {
    super(scope, id, props);
    const { config } = props;
    const resources: Resources = {
      config,
      logRetention: retention(config.logRetentionDays),
      data: new DataBucket(this, "Data", {
        infrequentAccessAfterDays: config.archiveInfrequentAccessDays,
        glacierAfterDays: config.archiveGlacierDays,
        recordingsInfrequentAccessAfterDays: config.recordingsInfrequentAccessDays,
        recordingsGlacierAfterDays: config.recordingsGlacierDays,
        retention: {
          archiveDays: config.retainArchiveDays,
          quarantineDays: config.retainQuarantineDays,
          recordingsDays: config.retainRecordingsDays,
          oversizeDays: config.retainOversizeDays,
          noncurrentVersionsDays: config.retainNoncurrentVersionsDays,
          accessLogDays: config.retainAccessLogDays,
        },
      }),
      tables: new ProjectionTables(this, "Tables", {
        capacity: tableCapacity(config),
        expiring: Object.keys(itemExpiryDays(config)) as Array<keyof ReturnType<typeof itemExpiryDays>>,
      }),
      events: new QueueWithDeadLetter(this, EVENTS_QUEUE.id, {
        // AWS's guidance for an SQS event source: 6 × the function's timeout, plus the batching window.
        visibilityTimeout: Duration.seconds(
          TIMEOUTS.projector.toSeconds() * VISIBILITY_FACTOR + config.projectorBatchingWindowSeconds,
        ),
        maxReceiveCount: config.eventsMaxReceiveCount,
        retentionPeriod: Duration.days(SOURCE_QUEUE_RETENTION_DAYS),
        deadLetterRetentionPeriod: Duration.days(config.retainDeadLettersDays),
      }),
      recordings: new QueueWithDeadLetter(this, RECORDINGS_QUEUE.id, {
        visibilityTimeout: Duration.seconds(TIMEOUTS.recorder.toSeconds() * VISIBILITY_FACTOR),
        maxReceiveCount: config.recordingsMaxReceiveCount,
        retentionPeriod: Duration.days(SOURCE_QUEUE_RETENTION_DAYS),
        deadLetterRetentionPeriod: Duration.days(config.retainDeadLettersDays),
      }),
      apps: new AppSettings(this, "Apps", {
        seedAllowedAppIds: config.allowedAppIds,
        logRetention: retention(config.logRetentionDays),
      }),
    };
    const credentials = webhookCredentials(this, config.credentialsSecretArn);
    const ingest = this.ingest(resources, credentials);
    const projector = this.projector(resources);
    const recorder = this.recorder(resources);

    const edge = new WebhookIngest(this, "Webhook", {
      handler: ingest.function,
      rateLimit: config.throttleRateLimit,
      burstLimit: config.throttleBurstLimit,
      logRetention: resources.logRetention,
      pathToken: config.webhookPathToken,
      domain: customDomain(config),
    });
    const monitoring = new Monitoring(this, "Monitoring", {
      api: edge.api,
      apiThrottled: edge.throttledRequests,
      functions: { Ingest: ingest.function, Projector: projector.function, Recorder: recorder.function },
      ingestLogs: ingest.logGroup,
      queues: { Events: resources.events, Recordings: resources.recordings },
      queueAgeAlarmSeconds: config.queueAgeAlarmSeconds,
      api5xxAlarmPercent: config.api5xxAlarmPercent,
      projectorFailedAlarmCount: config.projectorFailedAlarmCount,
      recorderFailedAlarmCount: config.recorderFailedAlarmCount,
      reconciler: config.reconcileEveryMinutes !== undefined,
      alarmEmail: config.alarmEmail,
    });
    const stream = this.stream(resources, projector, monitoring);
    const reconciler = addReconciler(this, resources, stream);
    if (reconciler) monitoring.watchFunction("Reconciler", reconciler.function);
    const analytics = new ActivityAnalytics(this, "Analytics", {
      data: resources.data,
      logRetention: resources.logRetention,
      everyMinutes: config.activityEveryMinutes,
      graceMinutes: config.activityGraceMinutes,
      bytesScannedCutoffMb: config.athenaBytesScannedCutoffMb,
      athenaResultsDays: config.retainAthenaResultsDays,
      archiveDays: config.retainArchiveDays,
      alarmTopic: monitoring.topic,
    });
    // The schedule's function: a run that fails or times out outside a day's rollup (listing the
    // archive) is an Errors alarm; a throttled tick (the account's concurrency exhausted) a Throttles one.
    monitoring.watchFunction("Rollup", analytics.rollup.function);
    applyProductionSettings(this, {
      config,
      monitoring,
      tables: resources.tables,
      queues: { Events: resources.events, Recordings: resources.recordings },
      ingest,
      edge,
      named: {
        tables: { ...resources.tables.tables, Apps: resources.apps.table, Activity: analytics.table },
        dataBucket: resources.data.bucket,
      },
    });
    this.outputs(resources, edge, credentials, monitoring);
    new CfnOutput(this, "ActivityTable", {
      value: analytics.table.tableName,
      description: "activity figures",
    });
    new CfnOutput(this, "AthenaWorkGroup", {
      value: analytics.workGroup.ref,
      description: "SQL over the archive",
    });
    new CfnOutput(this, "GlueDatabase", {
      value: analytics.database.ref,
      description: "holds archive_events",
    });
  }

  /** The ingest: sends to the events queue, reads the credentials, writes oversize bodies. */
  private ingest(
    { config, logRetention, data, events, apps }: Resources,
    credentials: ISecret,
  ): BackendFunction {
    const ingest = new BackendFunction(this, "Ingest", {
      service: "ingest",
      entry: FUNCTION_ENTRIES.ingest,
      description: "Authenticates webhook deliveries and enqueues them",
      // 256 MB: Lambda's CPU share grows with memory, and the ingest's latency is CPU-bound (TLS, hashing).
      memorySize: 256,
      timeout: TIMEOUTS.ingest,
      logRetention,
      systemLogLevel: INGEST_SYSTEM_LOG_LEVEL,
      tracing: config.ingestTracing,
      // It logs an error's name and message, never its stack: source maps would only slow its cold start.
      sourceMaps: false,
      environment: ingestEnvironment({
        eventsQueueUrl: events.queue.queueUrl,
        dataBucket: data.bucket.bucketName,
        credentialsSecretId: credentials.secretArn,
        allowedAppsTable: restrictsApps(config) ? apps.table.tableName : undefined,
      }),
    });
    sendOnly(ingest, events.queue);
    if (restrictsApps(config)) apps.grantAllowlistRead(ingest.function);
    readSecret(ingest, credentials, config.credentialsSecretArn ? config.secretsKmsKeyArn : undefined);
    data.grantObjects(ingest, ["s3:PutObject"], [S3_PREFIX.oversize]);
    return ingest;
  }

  /** The projector: consumes the events queue, writes the tables, the archive and recording jobs. */
  private projector({
    config,
    logRetention,
    data,
    tables,
    events,
    recordings,
    apps,
  }: Resources): BackendFunction {
    const projector = new BackendFunction(this, "Projector", {
      service: "projector",
      entry: FUNCTION_ENTRIES.projector,
      description: "Projects webhook events into the tables and archives them",
      memorySize: 512,
      timeout: TIMEOUTS.projector,
      logRetention,
      environment: projectorEnvironment({
        tables: tables.names,
        dataBucket: data.bucket.bucketName,
        recordingsQueueUrl: recordings.queue.queueUrl,
        itemExpiryDays: itemExpiryDays(config),
      }),
    });
    projector.function.addEventSource(
      new SqsEventSource(events.queue, {
        batchSize: config.projectorBatchSize,
        maxBatchingWindow: Duration.seconds(config.projectorBatchingWindowSeconds),
        reportBatchItemFailures: true,
        maxConcurrency: config.projectorMaxConcurrency,
      }),
    );
    tables.grantItemReadWrite(projector.function);
    data.grantObjects(projector, ["s3:GetObject"], [S3_PREFIX.oversize]);
    // oversize/: a body too large for the stream's 256 KiB goes out as a pointer to its own object (#41).
    data.grantObjects(
      projector,
      ["s3:PutObject"],
      [S3_PREFIX.raw, S3_PREFIX.edge, S3_PREFIX.quarantine, S3_PREFIX.oversize],
    );
    sendOnly(projector, recordings.queue);
    // The erased subjects (#50): a delivery naming a user erased since it was received is redacted.
    apps.grantErasedSubjectsRead(projector.function);
    return projector;
  }

  /** The recorder: consumes recording jobs, streams into the bucket, updates sessions. */
  private recorder({ config, logRetention, data, tables, recordings }: Resources): BackendFunction {
    const apiKeys = config.recordingApiKeysSecretArn
      ? Secret.fromSecretCompleteArn(this, "RecordingApiKeys", config.recordingApiKeysSecretArn)
      : undefined;
    const recorder = new BackendFunction(this, "Recorder", {
      service: "recorder",
      entry: FUNCTION_ENTRIES.recorder,
      description: "Streams call and meeting recordings into S3",
      // Memory stays flat (~150 MB, see bench:recorder); 512 MB buys network and CPU for hashing.
      memorySize: 512,
      timeout: TIMEOUTS.recorder,
      logRetention,
      environment: recorderEnvironment({
        sessionsTable: tables.names.sessions,
        dataBucket: data.bucket.bucketName,
        maxRecordingBytes: config.maxRecordingBytes,
        apiKeysSecretId: apiKeys?.secretArn,
        apiKeyHosts: config.recordingApiKeyHosts,
      }),
    });
    recorder.function.addEventSource(
      new SqsEventSource(recordings.queue, {
        batchSize: RECORDINGS_QUEUE.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: config.recorderMaxConcurrency,
      }),
    );
    // One session at a time (GetItem, then a conditional PutItem): no batch reads.
    tables.grantItemReadWrite(recorder.function, ["Sessions"], { batchReads: false });
    // Multipart upload, the in-place copy that adds size and checksum, and HEAD for idempotency.
    data.grantObjects(
      recorder,
      ["s3:PutObject", "s3:GetObject", "s3:AbortMultipartUpload"],
      [S3_PREFIX.recordings],
    );
    // Listing its own prefix only: the idempotency check finds an already archived recording.
    data.grantListPrefix(recorder, S3_PREFIX.recordings);
    if (apiKeys) readSecret(recorder, apiKeys, config.secretsKmsKeyArn);
    return recorder;
  }

  /**
   * The stream of facts (#41), on every deployment (an idle topic costs nothing, and `webhook
   * listen --stack` needs one): the topic, encrypted with the alarm topic's key; the declared
   * subscribers' queues; the projector as its publisher; alarms, dashboard and outputs.
   */
  private stream(
    { config, apps }: Resources,
    projector: BackendFunction,
    monitoring: Monitoring,
  ): EventStream {
    const stream = new EventStream(this, "Stream", {
      key: monitoring.key,
      subscribers: config.streamSubscribers,
      subscriberRetentionPeriod: Duration.days(streamFactsRetentionDays(config)),
      deadLetterRetentionPeriod: Duration.days(config.retainDeadLettersDays),
    });
    stream.grantPublish(projector.function, apps.table);
    for (const [name, value] of Object.entries(
      stream.publisherEnvironment(apps.table, config.eventsMaxReceiveCount),
    ))
      projector.function.addEnvironment(name, value);
    monitoring.watchStream(stream);
    const output = this.output.bind(this);
    output(STREAM_OUTPUTS.topicArn, stream.topic.topicArn, "the stream of facts (webhook listen --stack)");
    output(
      STREAM_OUTPUTS.keyArn,
      stream.key.keyArn,
      "the stream topic's key (a publisher uses it through SNS)",
    );
    output(
      STREAM_OUTPUTS.unpublishedQueueUrl,
      stream.unpublished.queueUrl,
      "facts the projector could not publish (redrive --stream)",
    );
    for (const { subscriber, queues } of stream.subscribers) {
      const outputs = subscriberOutputs(subscriber.name);
      output(outputs.queueUrl, queues.queue.queueUrl, `the ${subscriber.name} subscriber's queue`);
      output(outputs.queueArn, queues.queue.queueArn, `the ${subscriber.name} subscriber's queue (ARN)`);
      output(
        outputs.deadLetterQueueUrl,
        queues.deadLetterQueue.queueUrl,
        `the ${subscriber.name} subscriber's dead-letter queue`,
      );
    }
    return stream;
  }

  /** A stack output (what `--stack` reads), with what it is. */
  private output(id: string, value: string, description: string): void {
    new CfnOutput(this, id, { value, description });
  }

  /** What the platform's settings, the CLIs (`--stack`) and an operator need. */
  private outputs(
    { config, data, tables, events, recordings, apps }: Resources,
    edge: WebhookIngest,
    credentials: ISecret,
    monitoring: Monitoring,
  ): void {
    const output = this.output.bind(this);
    output("WebhookUrl", edge.webhookUrl, "Paste into the platform's webhook settings (Webhook URL)");
    output(
      "CredentialsSecret",
      credentials.secretArn,
      "Basic auth username/password to enter in the platform's webhook settings",
    );
    for (const name of PROJECTION_TABLE_NAMES) output(tableOutput(name), tables.names[name], `${name} table`);
    output("DataBucket", data.bucket.bucketName, "recordings, raw archive, quarantine, oversize bodies");
    output("EventsQueueUrl", events.queue.queueUrl, "events queue");
    output("EventsDeadLetterQueueUrl", events.deadLetterQueue.queueUrl, "events DLQ");
    output("RecordingsQueueUrl", recordings.queue.queueUrl, "recordings queue");
    output("RecordingsDeadLetterQueueUrl", recordings.deadLetterQueue.queueUrl, "recordings DLQ");
    output("AlarmTopic", monitoring.topic.topicArn, "alarms are published here");
    output("AppsTable", apps.table.tableName, "per-app settings: allowed apps, connected webhooks");
    output(
      "ManagementSecret",
      apps.managementSecret.secretArn,
      "the platform management API's url, key and secret (npx webhook connect)",
    );
    output(
      "ImportApiKeysSecret",
      apps.importSecret.secretArn,
      "each app's data import address and API key (npx webhook import --stack)",
    );
    if (config.recordingApiKeysSecretArn)
      output(
        "RecordingApiKeysSecret",
        config.recordingApiKeysSecretArn,
        "per-app API keys: token-protected recordings and npm run reconcile",
      );
  }
}

/**
 * `sqs:SendMessage` on one queue, and nothing else: CDK's `grantSendMessages` adds attribute and
 * URL reads that a sender with the queue's URL never makes.
 */
function sendOnly(fn: BackendFunction, queue: IQueue): void {
  fn.function.addToRolePolicy(
    new PolicyStatement({ actions: ["sqs:SendMessage"], resources: [queue.queueArn] }),
  );
}

function retention(days: number): RetentionDays {
  const allowed = Object.values(RetentionDays).filter((v): v is RetentionDays => typeof v === "number");
  const match = allowed.find((d) => d === days);
  if (match === undefined)
    throw new Error(`logRetentionDays ${days} is not a CloudWatch retention (e.g. 7, 14, 30, 90, 365)`);
  return match;
}
