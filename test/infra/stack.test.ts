import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { Queue } from "aws-cdk-lib/aws-sqs";
import { beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../infra/app";
import { bundleCounts } from "../../infra/bundling";
import { QUARANTINE_SPIKE } from "../../shared/platform/constants";
import {
  PROJECTOR_OUTCOMES,
  RECONCILER_OUTCOMES,
  RECORDER_OUTCOMES,
  TRIGGER_METRICS,
} from "../../shared/platform/outcomes";
import { PROJECTION_TABLES, TABLE_DEFINITIONS, tableEnvVar, tableOutput } from "../../shared/platform/tables";
import { prebundleStackFunctions } from "../support/prebundle";
import { cfnLintAvailable, cfnLintErrors } from "./cfn-lint";

let template: Template;
/** The bundles the first synth built rather than copied (0: the prebundling matched the stack). */
let synthBuilds: number;
let json: string;
/** The provisioned-capacity template (set by its test), linted by cfn-lint too. */
let provisionedJson: string | undefined;

beforeAll(async () => {
  await prebundleStackFunctions();
  // cdk-nag's AwsSolutions and Serverless packs run as validation plugins: synth throws on any
  // unacknowledged finding, so a passing synth is the "zero unacknowledged errors" check.
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), "cdk-test-")),
    context: { stage: "test", alarmEmail: "ops@example.com", allowedAppIds: ["app1", "app2"] },
  });
  const { stack } = buildApp(app);
  const builds = bundleCounts.builds;
  app.synth();
  synthBuilds = bundleCounts.builds - builds;
  template = Template.fromStack(stack);
  json = JSON.stringify(template.toJSON());
}, 120_000);

function resourcesOf(type: string): Array<{ id: string; props: Record<string, unknown> }> {
  return Object.entries(template.findResources(type)).map(([id, r]) => ({ id, props: r.Properties ?? {} }));
}

/** The backend's own functions (not CDK's provider of the apps table's seed, `AwsCustomResource`). */
function backendFunctions() {
  return resourcesOf("AWS::Lambda::Function").filter(
    (f) =>
      String(f.props.Runtime).startsWith("nodejs") && !f.id.startsWith("AWS679f53fac002430cb0da5b7982bd2287"),
  );
}

function policyOf(fragment: string): string {
  const policy = resourcesOf("AWS::IAM::Policy").find((p) => p.id.startsWith(fragment));
  if (!policy) throw new Error(`no policy for ${fragment}`);
  return JSON.stringify(policy.props);
}

describe("the CDK stack", () => {
  it("bundles each function once per process: a synth after the prebundling copies every bundle (#29 item 12)", () => {
    expect(synthBuilds).toBe(0);
  });

  it("synthesizes with the cdk-nag packs on, and fails on a finding nobody acknowledged", () => {
    // Prepare: the same app, plus one queue that breaks AwsSolutions-SQS3/SQS4 (no DLQ, no TLS-only).
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-nag-")),
      context: { stage: "nag", alarms: "none" },
    });
    const { stack } = buildApp(app);
    new Queue(stack, "Unacknowledged");

    // Act
    const synth = () => app.synth();

    // Assess: synth refuses it, and the report names the finding and the construct.
    expect(synth).toThrow(/AwsSolutions-SQS3[\s\S]*Unacknowledged|Unacknowledged[\s\S]*AwsSolutions-SQS3/);
  });

  it("routes POST /webhook with default throttling and JSON access logs", () => {
    template.hasResourceProperties("AWS::ApiGatewayV2::Route", { RouteKey: "POST /webhook" });
    template.hasResourceProperties("AWS::ApiGatewayV2::Stage", {
      StageName: "$default",
      DefaultRouteSettings: { ThrottlingBurstLimit: 1000, ThrottlingRateLimit: 500 },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp("requestId") },
    });
  });

  it("runs every function on arm64, the latest Node runtime, with JSON logs and log retention; the workers traced", () => {
    const functions = backendFunctions();
    expect(functions.length).toBeGreaterThanOrEqual(3);
    for (const f of functions) {
      const perEvent = String(f.props.Description).startsWith("Authenticates");
      expect(f.props).toMatchObject({
        Runtime: "nodejs24.x",
        Architectures: ["arm64"],
        // The ingest runs once per event: no trace, and none of Lambda's start/report lines.
        TracingConfig: { Mode: perEvent ? "PassThrough" : "Active" },
        LoggingConfig: {
          LogFormat: "JSON",
          ApplicationLogLevel: "INFO",
          SystemLogLevel: perEvent ? "WARN" : "INFO",
        },
      });
    }
    template.allResourcesProperties("AWS::Logs::LogGroup", { RetentionInDays: 30 });
  });

  it("runs index.handler from the bundled asset; source maps on for every function but the ingest", () => {
    const functions = backendFunctions();
    for (const f of functions) {
      const env =
        (f.props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      const isIngest = String(f.props.Description).startsWith("Authenticates");
      expect(f.props.Handler).toBe("index.handler");
      expect(env.NODE_OPTIONS).toBe(isIngest ? undefined : "--enable-source-maps");
    }
  });

  it("traces the ingest when the deployment asks for it", () => {
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-traced-")),
      context: { stage: "traced", ingestTracing: "true", alarms: "none" },
    });
    const traced = Template.fromStack(buildApp(app).stack);
    traced.hasResourceProperties("AWS::Lambda::Function", {
      Description: Match.stringLikeRegexp("^Authenticates"),
      TracingConfig: { Mode: "Active" },
    });
  });

  it("reports batch item failures from both SQS event sources, with batching and maximum concurrency", () => {
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      BatchSize: 200,
      MaximumBatchingWindowInSeconds: 2,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    template.hasResourceProperties("AWS::Lambda::EventSourceMapping", {
      BatchSize: 1,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });

  it("gives each queue a DLQ, SSE, and a visibility timeout of 6× its consumer's timeout (plus the batching window)", () => {
    template.hasResourceProperties("AWS::SQS::Queue", {
      // 6 × 30 s + the 2 s batching window.
      VisibilityTimeout: 182,
      SqsManagedSseEnabled: true,
      RedrivePolicy: { maxReceiveCount: 5, deadLetterTargetArn: Match.anyValue() },
    });
    template.hasResourceProperties("AWS::SQS::Queue", {
      VisibilityTimeout: 5400,
      RedrivePolicy: { maxReceiveCount: 5, deadLetterTargetArn: Match.anyValue() },
    });
    const queues = resourcesOf("AWS::SQS::Queue");
    expect(queues.every((q) => q.props.SqsManagedSseEnabled === true)).toBe(true);
    const policies = resourcesOf("AWS::SQS::QueuePolicy");
    expect(policies).toHaveLength(queues.length);
    for (const p of policies) expect(JSON.stringify(p.props)).toContain('"aws:SecureTransport":"false"');
    const processor = resourcesOf("AWS::Lambda::Function").find((f) => f.id.startsWith("Projector"));
    expect(processor?.props.Timeout).toBe(30);
  });

  it("keeps both queues standard, so that each app's message group makes them fair queues, and graphs their fairness", () => {
    // A FIFO queue would turn the app's group into strict per-app ordering (and 300 messages/s per
    // API action without high throughput): the groups are for fairness only.
    for (const q of resourcesOf("AWS::SQS::Queue")) expect(q.props.FifoQueue).toBeUndefined();
    // Sending with a group needs no permission beyond sqs:SendMessage, and no condition narrows it.
    expect(policyOf("IngestFunctionServiceRoleDefaultPolicy")).not.toContain("Condition");
    const dashboard = Object.values(template.findResources("AWS::CloudWatch::Dashboard"))[0];
    const body = JSON.stringify(dashboard?.Properties?.DashboardBody);
    expect(body).toContain("ApproximateNumberOfNoisyGroups");
    expect(body).toContain("ApproximateAgeOfOldestMessageInQuietGroups");
  });

  it("creates the tables from the shared definitions: on demand, PITR, encrypted, retained", () => {
    const tables = Object.values(template.findResources("AWS::DynamoDB::Table"));
    // The projection tables, the activity table (analytics) and the apps table.
    expect(tables).toHaveLength(TABLE_DEFINITIONS.length + 2);
    for (const table of tables) {
      expect(table.DeletionPolicy).toBe("Retain");
      expect(table.Properties).toMatchObject({
        BillingMode: "PAY_PER_REQUEST",
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
      });
    }
    for (const definition of TABLE_DEFINITIONS) {
      template.hasResourceProperties("AWS::DynamoDB::Table", {
        KeySchema: Match.arrayWith([{ AttributeName: definition.partitionKey.name, KeyType: "HASH" }]),
        ...(definition.indexes.length
          ? {
              GlobalSecondaryIndexes: Match.arrayWith(
                definition.indexes.map((i) => Match.objectLike({ IndexName: i.name })),
              ),
            }
          : {}),
      });
    }
  });

  it("keeps the data bucket private, encrypted, versioned, TLS-only and retained, with lifecycle rules", () => {
    template.hasResource("AWS::S3::Bucket", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({
        VersioningConfiguration: { Status: "Enabled" },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: Match.anyValue(),
        LoggingConfiguration: Match.anyValue(),
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
            Match.objectLike({
              Prefix: "raw/",
              Transitions: [
                { StorageClass: "STANDARD_IA", TransitionInDays: 30 },
                { StorageClass: "GLACIER_IR", TransitionInDays: 180 },
              ],
            }),
            Match.objectLike({ Prefix: "quarantine/" }),
          ]),
        },
      }),
    });
    for (const policy of resourcesOf("AWS::S3::BucketPolicy"))
      expect(JSON.stringify(policy.props)).toContain('"aws:SecureTransport":"false"');
  });

  it("generates the credentials secret and never puts a credential in the template", () => {
    template.hasResourceProperties("AWS::SecretsManager::Secret", {
      GenerateSecretString: Match.objectLike({
        GenerateStringKey: "password",
        ExcludePunctuation: true,
        PasswordLength: 32,
      }),
    });
    const ingest = resourcesOf("AWS::Lambda::Function").find((f) => f.id.startsWith("Ingest"));
    const env = JSON.stringify(ingest?.props.Environment);
    expect(env).toContain("WEBHOOK_CREDENTIALS_SECRET_ID");
    expect(env).not.toMatch(/WEBHOOK_PASSWORD|WEBHOOK_CREDENTIALS"/);
    expect(env).toContain("ALLOWED_APPS_TABLE");
    expect(json).not.toMatch(/"password"\s*:\s*"[^"]/);
  });

  it("keeps per-app settings in the apps table: seeded from allowedAppIds, read by the ingest with GetItem only", () => {
    const ingest = resourcesOf("AWS::Lambda::Function").find((f) => f.id.startsWith("Ingest"));
    const env = JSON.stringify(ingest?.props.Environment);
    expect(env).not.toContain("ALLOWED_APP_IDS");
    const seed = resourcesOf("Custom::AWS").map((r) => JSON.stringify(r.props));
    expect(seed).toHaveLength(1);
    expect(seed[0]).toContain("batchWriteItem");
    expect(seed[0]).toMatch(/app1.*app2/);
    const ingestPolicy = policyOf("IngestFunctionServiceRoleDefaultPolicy");
    expect(ingestPolicy).toContain('"Action":"dynamodb:GetItem"');
    expect(ingestPolicy).not.toMatch(/dynamodb:(Scan|Query|PutItem|BatchWriteItem)/);
    expect(template.findOutputs("AppsTable")).not.toEqual({});
  });

  it.each([
    ["management API", "ManagementSecret"],
    ["data import API", "ImportApiKeysSecret"],
  ])("lets no function of the pipeline read the platform's %s secret", (description, output) => {
    const [secretId] = Object.keys(
      template.findResources("AWS::SecretsManager::Secret", {
        Properties: { Description: Match.stringLikeRegexp(description) },
      }),
    );
    expect(secretId).toBeDefined();
    const readers = resourcesOf("AWS::IAM::Policy").filter((p) =>
      JSON.stringify(p.props).includes(`"${secretId}"`),
    );
    expect(readers.map((p) => p.id)).toEqual([]);
    expect(JSON.stringify(template.findOutputs(output))).toContain(`"${secretId}"`);
  });

  it("grants each function only what it uses", () => {
    const ingest = policyOf("IngestFunctionServiceRoleDefaultPolicy");
    expect(ingest).toContain('"Action":"sqs:SendMessage"');
    expect(ingest).toContain('"Action":"secretsmanager:GetSecretValue"');
    // Nothing a sender or a secret reader does not call.
    expect(ingest).not.toMatch(/sqs:GetQueueAttributes|sqs:GetQueueUrl|secretsmanager:DescribeSecret/);
    expect(ingest).toMatch(/s3:PutObject.*oversize\/\*/);
    // The apps table's allowlist only: one key read.
    expect(ingest.match(/dynamodb:[A-Za-z]+/g)).toEqual(["dynamodb:GetItem"]);
    expect(ingest).not.toContain("s3:GetObject");

    const projector = policyOf("ProjectorFunctionServiceRoleDefaultPolicy");
    expect(projector).toContain('["dynamodb:GetItem","dynamodb:BatchGetItem","dynamodb:PutItem"]');
    expect(projector).not.toMatch(/dynamodb:(Scan|DeleteItem|\*)/);
    expect(projector).toMatch(/raw\/\*/);
    expect(projector).toMatch(/quarantine\/\*/);
    // A body past the stream's 256 KiB is published as a pointer to an object it writes (#41).
    expect(projector).toMatch(/"s3:PutObject".*oversize\/\*/);
    expect(projector).not.toContain("recordings/*");

    const recorder = policyOf("RecorderFunctionServiceRoleDefaultPolicy");
    expect(recorder).toMatch(/recordings\/\*/);
    expect(recorder).not.toContain("s3:ListMultipartUploadParts");
    expect(recorder).not.toMatch(/raw\/\*|quarantine\/\*|secretsmanager/);
  });

  it("alarms on dead letters, old messages, errors, throttles and the API's 5xx rate, to an encrypted topic", () => {
    template.hasResourceProperties("AWS::SNS::Topic", { KmsMasterKeyId: Match.anyValue() });
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "email",
      Endpoint: "ops@example.com",
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateNumberOfMessagesVisible",
      Threshold: 1,
      AlarmActions: [Match.anyValue()],
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ApproximateAgeOfOldestMessage",
      Threshold: 300,
    });
    // Any 429 of the edge's throttle: counted from the access log (the HTTP API's 4xx mixes in the function's 400/401/403).
    template.hasResourceProperties("AWS::Logs::MetricFilter", {
      FilterPattern: '{ $.status = "429" }',
      LogGroupName: Match.anyValue(),
      MetricTransformations: [
        Match.objectLike({
          MetricName: "EdgeThrottledRequests",
          MetricNamespace: "WebhookBackend",
          MetricValue: "1",
        }),
      ],
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "EdgeThrottledRequests",
      Statistic: "Sum",
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      TreatMissingData: "notBreaching",
      AlarmActions: [Match.anyValue()],
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { MetricName: "Errors" });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", { MetricName: "Throttles" });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: "IF(requests > 0, 100 * errors / requests, 0)" }),
      ]),
    });
    // Failures that a batch reports (retried, not yet dead-lettered): the projector's and the recorder's.
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ProjectorEvents",
      Dimensions: Match.arrayWith([{ Name: "outcome", Value: "failed" }]),
      Threshold: 10,
      Period: 300,
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      Threshold: 3,
      Metrics: Match.arrayWith([
        Match.objectLike({
          MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: "RecorderJobs" }) }),
        }),
      ]),
    });
    // The dashboard graphs every outcome of every vocabulary, and carries no Tags (cfn-lint E3002).
    const dashboard = Object.values(template.findResources("AWS::CloudWatch::Dashboard"))[0];
    expect(dashboard?.Properties?.Tags).toBeUndefined();
    const body = JSON.stringify(dashboard?.Properties?.DashboardBody);
    for (const outcome of [...PROJECTOR_OUTCOMES, ...RECORDER_OUTCOMES])
      expect(body).toContain(`\\"${outcome}\\"`);
  });

  it("alarms on a rise in one trigger's quarantine rate: one alarm per modelled trigger, over 5% of at least 20 events in 15 minutes", () => {
    const alarms = Object.values(template.findResources("AWS::CloudWatch::Alarm")).filter((a) =>
      JSON.stringify(a.Properties?.Metrics ?? []).includes(TRIGGER_METRICS.quarantined),
    );
    expect(alarms).toHaveLength(KNOWN_TRIGGERS.size);
    for (const trigger of ["message_edited", "message_deleted", "group_member_banned"])
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        Threshold: QUARANTINE_SPIKE.sharePercent,
        ComparisonOperator: "GreaterThanThreshold",
        AlarmActions: [Match.anyValue()],
        Metrics: Match.arrayWith([
          Match.objectLike({ Expression: "IF(events >= 20, 100 * quarantined / events, 0)" }),
          Match.objectLike({
            Id: "quarantined",
            MetricStat: Match.objectLike({
              Period: 900,
              Stat: "Sum",
              Metric: Match.objectLike({
                MetricName: TRIGGER_METRICS.quarantined,
                Dimensions: Match.arrayWith([{ Name: "trigger", Value: trigger }]),
              }),
            }),
          }),
        ]),
      });
  });

  it("keeps the tables' deployed names: logical ids, the projector's variables, the stack outputs", () => {
    // Renaming a table's construct id would make CloudFormation replace a deployed table (and
    // lose its items); a variable or output renamed would strand a deployed function or a CLI.
    const tables = resourcesOf("AWS::DynamoDB::Table").map((t) => t.id.replace(/[0-9A-F]{8}$/, ""));
    expect(tables).toEqual(
      expect.arrayContaining(["TablesGroups", "TablesMemberships", "TablesPresence", "TablesSessions"]),
    );
    const projector = resourcesOf("AWS::Lambda::Function").find((f) => f.id.startsWith("Projector"));
    const variables = Object.keys(
      (projector?.props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {},
    );
    expect(variables).toEqual(
      expect.arrayContaining(["GROUPS_TABLE", "MEMBERSHIPS_TABLE", "PRESENCE_TABLE", "SESSIONS_TABLE"]),
    );
    expect(Object.keys(template.findOutputs("*"))).toEqual(
      expect.arrayContaining(["GroupsTable", "MembershipsTable", "PresenceTable", "SessionsTable"]),
    );
  });

  it("deploys every declared table: its keys, its variable in the projector, its output", () => {
    const tables = resourcesOf("AWS::DynamoDB::Table");
    const projector = resourcesOf("AWS::Lambda::Function").find((f) => f.id.startsWith("Projector"));
    const variables =
      (projector?.props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const outputs = template.findOutputs("*");
    for (const name of PROJECTION_TABLE_NAMES) {
      const definition = PROJECTION_TABLES[name];
      const table = tables.find((t) => new RegExp(`^Tables${definition.id}[0-9A-F]{8}$`).test(t.id));
      expect(table, name).toBeDefined();
      expect(table?.props.KeySchema).toEqual([
        { AttributeName: definition.partitionKey.name, KeyType: "HASH" },
        ...("sortKey" in definition ? [{ AttributeName: definition.sortKey.name, KeyType: "RANGE" }] : []),
      ]);
      const indexes = (table?.props.GlobalSecondaryIndexes ?? []) as Array<{ IndexName: string }>;
      expect(indexes.map((i) => i.IndexName)).toEqual(definition.indexes.map((i) => i.name));
      expect(variables[tableEnvVar(name)]).toEqual({ Ref: table?.id });
      expect(outputs[tableOutput(name)]?.Value).toEqual({ Ref: table?.id });
    }
  });

  it("deploys the stream's topic with no subscriber declared: the projector publishes only while a listener's switch is on (#41)", () => {
    const projector = resourcesOf("AWS::Lambda::Function").find((f) => f.id.startsWith("Projector"));
    const variables =
      (projector?.props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
    const [topic] = Object.keys(
      template.findResources("AWS::SNS::Topic", {
        Properties: { DisplayName: Match.stringLikeRegexp("stream") },
      }),
    );
    expect(variables).toMatchObject({
      STREAM_TOPIC_ARN: { Ref: topic },
      STREAM_ALWAYS_ON: "false",
      STREAM_UNPUBLISHED_QUEUE_URL: { Ref: expect.stringMatching(/^StreamUnpublished/) },
      APPS_TABLE: { Ref: expect.stringMatching(/^AppsTable/) },
      EVENTS_MAX_RECEIVE_COUNT: "5",
    });
    expect(resourcesOf("AWS::SNS::Subscription").filter((s) => s.props.Protocol === "sqs")).toEqual([]);
    expect(template.findOutputs("StreamTopicArn")).toEqual({
      StreamTopicArn: expect.objectContaining({ Value: { Ref: topic } }),
    });
  });

  it("outputs the webhook URL, the tables, the bucket and the queues", () => {
    const outputs = Object.keys(template.findOutputs("*"));
    expect(outputs).toEqual(
      expect.arrayContaining([
        "WebhookUrl",
        "CredentialsSecret",
        "SessionsTable",
        "DataBucket",
        "EventsQueueUrl",
      ]),
    );
  });
});

describe("provisioned capacity (capacityMode)", () => {
  it("provisions every projection table and index at its minimum, auto scaled to the target between min and max; the activity table stays on demand; cdk-nag clean", () => {
    // Prepare
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-provisioned-")),
      context: {
        stage: "prov",
        alarms: "none",
        capacityMode: "provisioned",
        capacityTargetPercent: "60",
        capacityMinWriteUnits: "2",
        capacityMaxWriteUnits: "400",
        capacityMinReadUnits: "3",
        capacityMaxReadUnits: "300",
      },
    });
    const { stack } = buildApp(app);

    // Act: synth runs cdk-nag, which throws on any unacknowledged finding.
    app.synth();
    const t = Template.fromStack(stack);
    provisionedJson = JSON.stringify(t.toJSON());

    // Assess: the four projection tables and each of their indexes start at the minimum.
    const tables = Object.entries(t.findResources("AWS::DynamoDB::Table"));
    // PROVISIONED is CloudFormation's default billing mode: the CDK leaves it out.
    const provisioned = tables.filter(([, r]) => r.Properties.BillingMode !== "PAY_PER_REQUEST");
    expect(provisioned).toHaveLength(TABLE_DEFINITIONS.length);
    const minimum = { ReadCapacityUnits: 3, WriteCapacityUnits: 2 };
    for (const [, table] of provisioned) {
      expect(table.Properties.ProvisionedThroughput).toEqual(minimum);
      for (const index of table.Properties.GlobalSecondaryIndexes ?? [])
        expect(index.ProvisionedThroughput).toEqual(minimum);
    }
    // The activity table (written in bursts by the rollup every 15 minutes) and the apps table
    // (a few reads per app and hour) stay on demand.
    const others = tables.filter(([, r]) => r.Properties.BillingMode === "PAY_PER_REQUEST");
    expect(others.map(([id]) => id).sort()).toEqual([
      expect.stringMatching(/^AnalyticsActivity/),
      expect.stringMatching(/^AppsTable/),
    ]);

    // One scalable target per table and per index, for reads and for writes, with the bounds asked for.
    const targets = Object.values(t.findResources("AWS::ApplicationAutoScaling::ScalableTarget")).map(
      (r) => r.Properties,
    );
    const indexes = TABLE_DEFINITIONS.flatMap((d) => d.indexes);
    const expected = [
      ["dynamodb:table:WriteCapacityUnits", TABLE_DEFINITIONS.length, 2, 400],
      ["dynamodb:table:ReadCapacityUnits", TABLE_DEFINITIONS.length, 3, 300],
      ["dynamodb:index:WriteCapacityUnits", indexes.length, 2, 400],
      ["dynamodb:index:ReadCapacityUnits", indexes.length, 3, 300],
    ] as const;
    for (const [dimension, count, min, max] of expected) {
      const of = targets.filter((p) => p.ScalableDimension === dimension);
      expect(of).toHaveLength(count);
      for (const p of of)
        expect(p).toMatchObject({ ServiceNamespace: "dynamodb", MinCapacity: min, MaxCapacity: max });
    }
    // Every index of every definition is scaled, by name.
    const ids = JSON.stringify(targets.map((p) => p.ResourceId));
    for (const index of indexes) expect(ids).toContain(`/index/${index.name}`);
    // Each target tracks the utilisation asked for.
    const policies = Object.values(t.findResources("AWS::ApplicationAutoScaling::ScalingPolicy")).map(
      (r) => r.Properties,
    );
    expect(policies).toHaveLength(targets.length);
    for (const p of policies)
      expect(p).toMatchObject({
        PolicyType: "TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration: {
          TargetValue: 60,
          PredefinedMetricSpecification: {
            PredefinedMetricType: expect.stringMatching(/^DynamoDB(Read|Write)CapacityUtilization$/),
          },
        },
      });
  });

  it("is off by default: on demand, no scaling", () => {
    expect(Object.keys(template.findResources("AWS::ApplicationAutoScaling::ScalableTarget"))).toEqual([]);
    for (const table of Object.values(template.findResources("AWS::DynamoDB::Table")))
      expect(table.Properties.ProvisionedThroughput).toBeUndefined();
  });
});

describe("the opt-in reconcile schedule", () => {
  it("adds a scheduled function with the apps and their regions, least privilege, and cdk-nag clean", () => {
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-reconcile-")),
      context: {
        stage: "rec",
        alarms: "none",
        reconcileEveryMinutes: "15",
        reconcileApps: '{"app1":"eu"}',
        recordingApiKeysSecretArn: "arn:aws:secretsmanager:eu-west-1:111111111111:secret:api-keys-AbCdEf",
      },
    });
    const { stack } = buildApp(app);
    app.synth();
    const t = Template.fromStack(stack);
    t.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(15 minutes)" });
    t.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ RECONCILE_APPS: '{"app1":"eu"}' }) },
    });
    const policy = Object.entries(t.findResources("AWS::IAM::Policy")).find(([id]) =>
      id.startsWith("Reconciler"),
    );
    const statements = JSON.stringify(policy?.[1]);
    expect(statements).toContain("dynamodb:Query");
    expect(statements).toContain("/index/online");
    // S3: only the archive of its own facts (#57 item 4), written, never read.
    expect(statements.match(/s3:[A-Za-z]+/g)).toEqual(["s3:PutObject"]);
    expect(statements).toContain("/reconcile/*");
    expect(statements).toContain("sns:Publish");
    t.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({ RECONCILE_APPS: '{"app1":"eu"}', STREAM_TOPIC_ARN: Match.anyValue() }),
      },
    });
    expect(t.findOutputs("RecordingApiKeysSecret")).not.toEqual({});
    const body = JSON.stringify(
      Object.values(t.findResources("AWS::CloudWatch::Dashboard"))[0]?.Properties?.DashboardBody,
    );
    for (const outcome of RECONCILER_OUTCOMES) expect(body).toContain(`\\"${outcome}\\"`);
  });

  it("refuses a schedule without the apps or their keys, naming what is missing", () => {
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-reconcile-")),
      context: { reconcileEveryMinutes: "15", alarms: "none" },
    });
    expect(() => buildApp(app)).toThrow(
      /reconcileEveryMinutes needs recordingApiKeysSecretArn .* and reconcileApps/,
    );
  });
});

describe("imported secrets encrypted with a customer-managed key", () => {
  it("lets exactly the functions that read them decrypt with that key, through Secrets Manager only", () => {
    const key = "arn:aws:kms:eu-west-1:111111111111:key/0b2f5a4c-1d2e-4f60-9a7b-3c4d5e6f7a8b";
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-kms-")),
      context: {
        stage: "kms",
        alarms: "none",
        credentialsSecretArn: "arn:aws:secretsmanager:eu-west-1:111111111111:secret:creds-AbCdEf",
        recordingApiKeysSecretArn: "arn:aws:secretsmanager:eu-west-1:111111111111:secret:keys-AbCdEf",
        secretsKmsKeyArn: key,
      },
    });
    const { stack } = buildApp(app);
    app.synth();
    const policies = Object.entries(Template.fromStack(stack).findResources("AWS::IAM::Policy"));
    const policy = (prefix: string) => JSON.stringify(policies.find(([id]) => id.startsWith(prefix))?.[1]);
    for (const reader of ["IngestFunction", "RecorderFunction"]) {
      expect(policy(reader)).toContain(`"Action":"kms:Decrypt"`);
      expect(policy(reader)).toContain(key);
      expect(policy(reader)).toContain("kms:ViaService");
    }
    // The projector reads no secret: the key is not its (its only KMS use is the stream topic's key, through SNS).
    expect(policy("ProjectorFunction")).not.toContain(key);
    expect(policy("ProjectorFunction")).not.toContain("secretsmanager");
  });
});

describe.skipIf(!cfnLintAvailable)("cfn-lint", () => {
  it.each([
    ["the default", () => json],
    ["the provisioned-capacity", () => provisionedJson ?? json],
  ])("reports no error on %s template in any commercial region", async (_, template) => {
    expect(await cfnLintErrors(template())).toEqual([]);
  });
});
