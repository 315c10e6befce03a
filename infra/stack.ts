import { CfnOutput, Duration, Stack, type StackProps, Validations } from "aws-cdk-lib";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import { RetentionDays } from "aws-cdk-lib/aws-logs";
import type { CfnBucket } from "aws-cdk-lib/aws-s3";
import { type ISecret, Secret } from "aws-cdk-lib/aws-secretsmanager";
import type { Construct, IConstruct } from "constructs";
import { S3_PREFIX } from "../shared/platform/constants";
import { EVENTS_QUEUE, RECORDINGS_QUEUE, VISIBILITY_FACTOR } from "../shared/platform/queues";
import { FUNCTION_ENTRIES } from "./bundling";
import type { DeploymentConfig } from "./config";
import { BackendFunction } from "./constructs/backend-function";
import { DataBucket } from "./constructs/data-bucket";
import { Monitoring } from "./constructs/monitoring";
import { ProjectionTables } from "./constructs/projection-tables";
import { QueueWithDeadLetter } from "./constructs/queue-with-dead-letter";
import { WebhookIngest } from "./constructs/webhook-ingest";

export interface WebhookBackendStackProps extends StackProps {
  readonly config: DeploymentConfig;
}

/** Function timeouts, and why. */
const TIMEOUTS = {
  // The platform waits 2 s for an answer; a cold start plus one SendMessage is well under that.
  ingest: Duration.seconds(10),
  // A batch of 10 events: a few DynamoDB round trips each, plus one S3 PUT for the raw archive.
  projector: Duration.seconds(EVENTS_QUEUE.consumerTimeoutSeconds),
  // One recording of up to 5 GiB: the recorder's own deadline (14 min) stops it before this.
  recorder: Duration.seconds(RECORDINGS_QUEUE.consumerTimeoutSeconds),
};

/**
 * The whole backend in one stack: the webhook edge, the events and recordings queues, the
 * projector and recorder, the tables, the data bucket, secrets, alarms and a dashboard.
 */
export class WebhookBackendStack extends Stack {
  constructor(scope: Construct, id: string, props: WebhookBackendStackProps) {
    super(scope, id, props);
    const { config } = props;
    const logRetention = retention(config.logRetentionDays);

    const data = new DataBucket(this, "Data", {
      infrequentAccessAfterDays: config.archiveInfrequentAccessDays,
      glacierAfterDays: config.archiveGlacierDays,
    });
    const { tables } = new ProjectionTables(this, "Tables");
    const events = new QueueWithDeadLetter(this, EVENTS_QUEUE.id, {
      visibilityTimeout: Duration.seconds(TIMEOUTS.projector.toSeconds() * VISIBILITY_FACTOR),
      maxReceiveCount: config.eventsMaxReceiveCount,
    });
    const recordings = new QueueWithDeadLetter(this, RECORDINGS_QUEUE.id, {
      visibilityTimeout: Duration.seconds(TIMEOUTS.recorder.toSeconds() * VISIBILITY_FACTOR),
      maxReceiveCount: config.recordingsMaxReceiveCount,
    });

    // The Basic-auth credentials: generated (a username and a 32-character alphanumeric password,
    // as the platform allows), or imported. Never a plaintext value in the template.
    const credentials: ISecret = config.credentialsSecretArn
      ? Secret.fromSecretCompleteArn(this, "WebhookCredentials", config.credentialsSecretArn)
      : new Secret(this, "WebhookCredentials", {
          description: "HTTP Basic credentials the platform uses for webhook deliveries",
          generateSecretString: {
            secretStringTemplate: JSON.stringify({ username: "platform-webhook" }),
            generateStringKey: "password",
            passwordLength: 32,
            excludePunctuation: true,
            includeSpace: false,
          },
        });
    const apiKeys = config.recordingApiKeysSecretArn
      ? Secret.fromSecretCompleteArn(this, "RecordingApiKeys", config.recordingApiKeysSecretArn)
      : undefined;

    const tableEnv = {
      GROUPS_TABLE: tables.Groups.tableName,
      MEMBERSHIPS_TABLE: tables.Memberships.tableName,
      PRESENCE_TABLE: tables.Presence.tableName,
      SESSIONS_TABLE: tables.Sessions.tableName,
    };

    const ingest = new BackendFunction(this, "Ingest", {
      entry: FUNCTION_ENTRIES.ingest,
      description: "Authenticates webhook deliveries and enqueues them",
      // 256 MB: Lambda's CPU share grows with memory, and the ingest's latency is CPU-bound (TLS, hashing).
      memorySize: 256,
      timeout: TIMEOUTS.ingest,
      logRetention,
      environment: {
        EVENTS_QUEUE_URL: events.queue.queueUrl,
        DATA_BUCKET: data.bucket.bucketName,
        WEBHOOK_CREDENTIALS_SECRET_ID: credentials.secretArn,
        ALLOWED_APP_IDS: config.allowedAppIds.join(","),
        POWERTOOLS_SERVICE_NAME: "ingest",
      },
    });
    const projector = new BackendFunction(this, "Projector", {
      entry: FUNCTION_ENTRIES.projector,
      description: "Projects webhook events into the tables and archives them",
      memorySize: 512,
      timeout: TIMEOUTS.projector,
      logRetention,
      environment: {
        ...tableEnv,
        DATA_BUCKET: data.bucket.bucketName,
        RECORDINGS_QUEUE_URL: recordings.queue.queueUrl,
        POWERTOOLS_SERVICE_NAME: "projector",
      },
    });
    const recorder = new BackendFunction(this, "Recorder", {
      entry: FUNCTION_ENTRIES.recorder,
      description: "Streams call and meeting recordings into S3",
      // Memory stays flat (~150 MB, see bench:recorder); 512 MB buys network and CPU for hashing.
      memorySize: 512,
      timeout: TIMEOUTS.recorder,
      logRetention,
      environment: {
        SESSIONS_TABLE: tables.Sessions.tableName,
        DATA_BUCKET: data.bucket.bucketName,
        MAX_RECORDING_BYTES: String(config.maxRecordingBytes),
        RECORDER_DEADLINE_MS: String(TIMEOUTS.recorder.toMilliseconds() - 60_000),
        ...(apiKeys ? { RECORDING_API_KEYS_SECRET_ID: apiKeys.secretArn } : {}),
        POWERTOOLS_SERVICE_NAME: "recorder",
      },
    });

    // Least privilege, statement by statement.
    const objects = (prefix: string) => data.bucket.arnForObjects(`${prefix}*`);
    events.queue.grantSendMessages(ingest.function);
    credentials.grantRead(ingest.function);
    ingest.function.addToRolePolicy(
      new PolicyStatement({ actions: ["s3:PutObject"], resources: [objects(S3_PREFIX.oversize)] }),
    );

    projector.function.addEventSource(
      new SqsEventSource(events.queue, {
        batchSize: config.projectorBatchSize,
        maxBatchingWindow: Duration.seconds(config.projectorBatchingWindowSeconds),
        reportBatchItemFailures: true,
        maxConcurrency: config.projectorMaxConcurrency,
      }),
    );
    projector.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["dynamodb:GetItem", "dynamodb:PutItem"],
        resources: Object.values(tables).map((t) => t.tableArn),
      }),
    );
    projector.function.addToRolePolicy(
      new PolicyStatement({ actions: ["s3:GetObject"], resources: [objects(S3_PREFIX.oversize)] }),
    );
    projector.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["s3:PutObject"],
        resources: [objects(S3_PREFIX.raw), objects(S3_PREFIX.quarantine)],
      }),
    );
    recordings.queue.grantSendMessages(projector.function);

    recorder.function.addEventSource(
      new SqsEventSource(recordings.queue, {
        batchSize: RECORDINGS_QUEUE.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: config.recorderMaxConcurrency,
      }),
    );
    recorder.function.addToRolePolicy(
      new PolicyStatement({
        actions: ["dynamodb:GetItem", "dynamodb:PutItem"],
        resources: [tables.Sessions.tableArn],
      }),
    );
    recorder.function.addToRolePolicy(
      new PolicyStatement({
        // Multipart upload, the in-place copy that adds size and checksum, and HEAD for idempotency.
        actions: ["s3:PutObject", "s3:GetObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
        resources: [objects(S3_PREFIX.recordings)],
      }),
    );
    recorder.function.addToRolePolicy(
      new PolicyStatement({
        // Listing its own prefix only: the idempotency check finds an already archived recording.
        actions: ["s3:ListBucket"],
        resources: [data.bucket.bucketArn],
        conditions: { StringLike: { "s3:prefix": [`${S3_PREFIX.recordings}*`] } },
      }),
    );
    apiKeys?.grantRead(recorder.function);

    const edge = new WebhookIngest(this, "Webhook", {
      handler: ingest.function,
      rateLimit: config.throttleRateLimit,
      burstLimit: config.throttleBurstLimit,
      logRetention,
    });

    const monitoring = new Monitoring(this, "Monitoring", {
      api: edge.api,
      functions: { Ingest: ingest.function, Projector: projector.function, Recorder: recorder.function },
      queues: { Events: events, Recordings: recordings },
      queueAgeAlarmSeconds: config.queueAgeAlarmSeconds,
      api5xxAlarmPercent: config.api5xxAlarmPercent,
      alarmEmail: config.alarmEmail,
    });

    const output = (id: string, value: string, description: string) =>
      new CfnOutput(this, id, { value, description });
    output("WebhookUrl", edge.webhookUrl, "Paste into the platform's webhook settings (Webhook URL)");
    output(
      "CredentialsSecret",
      credentials.secretArn,
      "Basic auth username/password to enter in the platform's webhook settings",
    );
    output("GroupsTable", tables.Groups.tableName, "groups table");
    output("MembershipsTable", tables.Memberships.tableName, "memberships table");
    output("PresenceTable", tables.Presence.tableName, "presence table");
    output("SessionsTable", tables.Sessions.tableName, "sessions table");
    output("DataBucket", data.bucket.bucketName, "recordings, raw archive, quarantine, oversize bodies");
    output("EventsQueueUrl", events.queue.queueUrl, "events queue");
    output("EventsDeadLetterQueueUrl", events.deadLetterQueue.queueUrl, "events DLQ");
    output("RecordingsQueueUrl", recordings.queue.queueUrl, "recordings queue");
    output("RecordingsDeadLetterQueueUrl", recordings.deadLetterQueue.queueUrl, "recordings DLQ");
    output("AlarmTopic", monitoring.topic.topicArn, "alarms are published here");

    this.acknowledge(credentials, [events, recordings], data, [ingest, projector, recorder], edge);
  }

  /**
   * cdk-nag findings we accept, each on the construct it concerns, each with its reason. cdk-nag v3
   * acknowledges findings one by one (`Rule[finding]`): there is no blanket suppression here.
   */
  private acknowledge(
    credentials: ISecret,
    queues: QueueWithDeadLetter[],
    data: DataBucket,
    functions: BackendFunction[],
    edge: WebhookIngest,
  ): void {
    const ack = (scope: IConstruct, id: string, reason: string) =>
      Validations.of(scope).acknowledge({ id, reason });
    if (credentials instanceof Secret) {
      ack(
        credentials,
        "AwsSolutions::AwsSolutions-SMG4",
        "The credentials must also be changed in the platform's webhook settings, by hand: rotation is a two-step change the credential list supports (old and new pair valid together), not a Lambda rotation.",
      );
    }
    for (const q of queues) {
      ack(
        q.deadLetterQueue,
        "Serverless::Serverless-SQSRedrivePolicy",
        "This is the dead-letter queue of its queue.",
      );
    }
    const bucket = this.resolve(this.getLogicalId(data.bucket.node.defaultChild as CfnBucket)) as string;
    for (const f of functions) {
      ack(
        f.function,
        "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
        "AWSLambdaBasicExecutionRole only lets the function write its own CloudWatch logs.",
      );
      ack(
        f.function,
        "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
        "X-Ray's PutTraceSegments and PutTelemetryRecords (tracing) have no resource-level permissions.",
      );
      for (const prefix of Object.values(S3_PREFIX)) {
        ack(
          f.function,
          `AwsSolutions::AwsSolutions-IAM5[Resource::<${bucket}.Arn>/${prefix}*]`,
          `Objects under ${prefix} in the data bucket: the keys are made per event or recording, so the grant is the prefix.`,
        );
      }
      ack(
        f.function,
        "Serverless::Serverless-LambdaDLQ",
        "Invoked synchronously (API Gateway) or by an SQS event source whose queue has a DLQ; there are no asynchronous invocations to dead-letter.",
      );
      ack(
        f.function,
        "Serverless::Serverless-LambdaEventSourceMappingDestination",
        "SQS event sources do not take on-failure destinations: failed messages go back to the queue and, after maxReceiveCount, to its DLQ.",
      );
    }
    ack(
      edge.api,
      "AwsSolutions::AwsSolutions-APIG4",
      "The platform signs deliveries with HTTP Basic auth, which the ingest function checks in constant time before anything else.",
    );
  }
}

function retention(days: number): RetentionDays {
  const allowed = Object.values(RetentionDays).filter((v): v is RetentionDays => typeof v === "number");
  const match = allowed.find((d) => d === days);
  if (match === undefined)
    throw new Error(`logRetentionDays ${days} is not a CloudWatch retention (e.g. 7, 14, 30, 90, 365)`);
  return match;
}
