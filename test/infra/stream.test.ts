import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../infra/app";
import { filterPolicyOf, type StreamSubscriber, subscriberOutputs } from "../../shared/stream/subscribers";
import { prebundleStackFunctions } from "../support/prebundle";
import { cfnLintAvailable, cfnLintErrors } from "./cfn-lint";

/** Two subscribers: one filtered by apps and triggers (a family and a name), one taking everything, enveloped. */
const SUBSCRIBERS: StreamSubscriber[] = [
  { name: "crm-sync", apps: ["app1", "app2"], triggers: ["group:*", "message_sent"] },
  { name: "audit", rawDelivery: false },
];

let template: Template;
let json: string;

/** The logical id of the one resource of this type whose id starts with `prefix`. */
function idOf(type: string, prefix: string): string {
  const ids = Object.keys(template.findResources(type)).filter((id) => id.startsWith(prefix));
  if (ids.length !== 1) throw new Error(`${ids.length} ${type} start with ${prefix}`);
  return ids[0] ?? "";
}

/** The statements of the policy whose logical id starts with `prefix`. */
function statementsOf(prefix: string): Array<Record<string, unknown>> {
  const policy = template.findResources("AWS::IAM::Policy")[idOf("AWS::IAM::Policy", prefix)];
  return policy?.Properties.PolicyDocument.Statement ?? [];
}

beforeAll(async () => {
  await prebundleStackFunctions();
  // One synth: cdk-nag's packs run in it and throw on any finding nobody acknowledged.
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), "cdk-stream-")),
    context: {
      stage: "stream",
      alarms: "none",
      streamSubscribers: JSON.stringify(SUBSCRIBERS),
      retainDeadLettersDays: "7",
      queueAgeAlarmSeconds: "600",
    },
  });
  const { stack } = buildApp(app);
  app.synth();
  template = Template.fromStack(stack);
  json = JSON.stringify(template.toJSON());
}, 180_000);

describe("the stream of facts, deployed (#41 items 1, 4, 6, 7)", () => {
  it("publishes to a standard topic encrypted with the alarm topic's key, TLS only", () => {
    const topic = idOf("AWS::SNS::Topic", "StreamTopic");
    const key = idOf("AWS::KMS::Key", "MonitoringTopicKey");
    template.hasResourceProperties("AWS::SNS::Topic", {
      DisplayName: Match.stringLikeRegexp("stream of facts"),
      KmsMasterKeyId: { "Fn::GetAtt": [key, "Arn"] },
      FifoTopic: Match.absent(),
    });
    // TLS only; and personal data leaves only for SQS queues: no HTTP, e-mail or SMS subscription, whoever asks.
    template.hasResourceProperties("AWS::SNS::TopicPolicy", {
      Topics: [{ Ref: topic }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: "Deny",
            Action: "sns:Publish",
            Condition: { Bool: { "aws:SecureTransport": "false" } },
          }),
          Match.objectLike({
            Effect: "Deny",
            Principal: { AWS: "*" },
            Action: "sns:Subscribe",
            Condition: { StringNotEquals: { "sns:Protocol": "sqs" } },
          }),
        ]),
      },
    });
    // One key for both topics: the key's policy keeps its account statement (IAM grants it, as to the projector).
    expect(Object.keys(template.findResources("AWS::KMS::Key"))).toEqual([key]);
  });

  it("gives each subscriber an encrypted queue with a dead-letter queue, both bound to the topic by aws:SourceArn", () => {
    const topic = idOf("AWS::SNS::Topic", "StreamTopic");
    for (const { name } of SUBSCRIBERS) {
      const prefix = `StreamSubscriber${name.replaceAll("-", "")}`;
      const queue = idOf("AWS::SQS::Queue", `${prefix}Queue`);
      const deadLetter = idOf("AWS::SQS::Queue", `${prefix}DeadLetter`);
      template.hasResourceProperties("AWS::SQS::Queue", {
        SqsManagedSseEnabled: true,
        // One day less than its DLQ's 7 (#48: a dead-lettered fact keeps its first enqueue time).
        MessageRetentionPeriod: 6 * 86_400,
        RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [deadLetter, "Arn"] }, maxReceiveCount: 5 },
      });
      expect(template.findResources("AWS::SQS::Queue")[deadLetter]?.Properties).toMatchObject({
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: 7 * 86_400,
      });
      for (const q of [queue, deadLetter])
        template.hasResourceProperties("AWS::SQS::QueuePolicy", {
          Queues: [{ Ref: q }],
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
              {
                Effect: "Allow",
                Action: "sqs:SendMessage",
                Principal: { Service: "sns.amazonaws.com" },
                Resource: { "Fn::GetAtt": [q, "Arn"] },
                Condition: { ArnEquals: { "aws:SourceArn": { Ref: topic } } },
              },
            ]),
          },
        });
    }
  });

  it("subscribes each queue with its filter policy, its raw delivery setting and a redrive policy to its DLQ", () => {
    const topic = idOf("AWS::SNS::Topic", "StreamTopic");
    for (const subscriber of SUBSCRIBERS) {
      const prefix = `StreamSubscriber${subscriber.name.replaceAll("-", "")}`;
      template.hasResourceProperties("AWS::SNS::Subscription", {
        TopicArn: { Ref: topic },
        Protocol: "sqs",
        Endpoint: { "Fn::GetAtt": [idOf("AWS::SQS::Queue", `${prefix}Queue`), "Arn"] },
        RawMessageDelivery: subscriber.rawDelivery ?? true,
        FilterPolicy: filterPolicyOf(subscriber) ?? Match.absent(),
        RedrivePolicy: {
          deadLetterTargetArn: { "Fn::GetAtt": [idOf("AWS::SQS::Queue", `${prefix}DeadLetter`), "Arn"] },
        },
      });
    }
    // The filtered one: its apps, a family as a prefix, and the erasure notice past the trigger filter.
    template.hasResourceProperties("AWS::SNS::Subscription", {
      FilterPolicy: {
        appId: ["app1", "app2"],
        $or: [{ trigger: ["message_sent", { prefix: "group_" }] }, { kind: ["erasure"] }],
      },
    });
  });

  it("outputs the topic, its key, the unpublished facts' queue and each subscriber's queues", () => {
    const outputs = template.findOutputs("*");
    expect(outputs.StreamTopicArn?.Value).toEqual({ Ref: idOf("AWS::SNS::Topic", "StreamTopic") });
    expect(outputs.StreamKeyArn?.Value).toEqual({
      "Fn::GetAtt": [idOf("AWS::KMS::Key", "MonitoringTopicKey"), "Arn"],
    });
    expect(outputs.StreamUnpublishedQueueUrl?.Value).toEqual({
      Ref: idOf("AWS::SQS::Queue", "StreamUnpublished"),
    });
    for (const { name } of SUBSCRIBERS) {
      const prefix = `StreamSubscriber${name.replaceAll("-", "")}`;
      const queue = idOf("AWS::SQS::Queue", `${prefix}Queue`);
      const names = subscriberOutputs(name);
      expect(outputs[names.queueUrl]?.Value).toEqual({ Ref: queue });
      expect(outputs[names.queueArn]?.Value).toEqual({ "Fn::GetAtt": [queue, "Arn"] });
      expect(outputs[names.deadLetterQueueUrl]?.Value).toEqual({
        Ref: idOf("AWS::SQS::Queue", `${prefix}DeadLetter`),
      });
    }
  });

  it("keeps facts it could not publish in the stream's own dead-letter queue, encrypted and retained, alarmed as 'facts not published'", () => {
    const unpublished = idOf("AWS::SQS::Queue", "StreamUnpublished");
    template.hasResource("AWS::SQS::Queue", {
      DeletionPolicy: "Retain",
      Properties: Match.objectLike({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 7 * 86_400 }),
    });
    expect(template.findResources("AWS::SQS::Queue")[unpublished]?.Properties.RedrivePolicy).toBeUndefined();
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      AlarmDescription: Match.stringLikeRegexp("^Facts not published"),
      MetricName: "ApproximateNumberOfMessagesVisible",
      Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": [unpublished, "QueueName"] } }],
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      AlarmActions: [{ Ref: idOf("AWS::SNS::Topic", "MonitoringAlarms") }],
    });
  });

  it("alarms on each subscriber's dead letters and oldest message, and graphs the stream and its subscribers", () => {
    for (const { name } of SUBSCRIBERS) {
      const prefix = `StreamSubscriber${name.replaceAll("-", "")}`;
      const alarmed = (metricName: string, queue: string, threshold: number) =>
        template.hasResourceProperties("AWS::CloudWatch::Alarm", {
          MetricName: metricName,
          Dimensions: [
            { Name: "QueueName", Value: { "Fn::GetAtt": [idOf("AWS::SQS::Queue", queue), "QueueName"] } },
          ],
          Threshold: threshold,
          AlarmActions: [Match.anyValue()],
        });
      alarmed("ApproximateNumberOfMessagesVisible", `${prefix}DeadLetter`, 1);
      alarmed("ApproximateAgeOfOldestMessage", `${prefix}Queue`, 600);
    }
    const dashboard = Object.values(template.findResources("AWS::CloudWatch::Dashboard"))[0];
    const body = JSON.stringify(dashboard?.Properties?.DashboardBody);
    for (const text of [
      "NumberOfMessagesPublished",
      "NumberOfNotificationsFilteredOut",
      "NumberOfNotificationsFailed",
      "not published",
      "Subscribers: queue depth and dead letters",
      "Subscribers: oldest message",
      "crm-sync DLQ",
    ])
      expect(body).toContain(text);
  });

  it("lets the projector publish to the topic, through SNS with the key, move a fact aside, and read the listener switch: nothing more", () => {
    const topic = idOf("AWS::SNS::Topic", "StreamTopic");
    const statements = statementsOf("ProjectorFunctionServiceRoleDefaultPolicy");
    const touching = (fragment: string) =>
      statements.filter((s) => JSON.stringify(s.Action).includes(fragment));
    expect(touching("sns:")).toEqual([{ Effect: "Allow", Action: "sns:Publish", Resource: { Ref: topic } }]);
    expect(touching("kms:")).toEqual([
      {
        Effect: "Allow",
        Action: ["kms:GenerateDataKey", "kms:Decrypt"],
        Resource: { "Fn::GetAtt": [idOf("AWS::KMS::Key", "MonitoringTopicKey"), "Arn"] },
        Condition: {
          StringEquals: {
            "kms:ViaService": { "Fn::Join": ["", ["sns.", { Ref: "AWS::Region" }, ".amazonaws.com"]] },
          },
        },
      },
    ]);
    expect(statements).toContainEqual({
      Effect: "Allow",
      Action: "sqs:SendMessage",
      Resource: { "Fn::GetAtt": [idOf("AWS::SQS::Queue", "StreamUnpublished"), "Arn"] },
    });
    expect(statements).toContainEqual({
      Effect: "Allow",
      Action: "dynamodb:GetItem",
      Resource: { "Fn::GetAtt": [idOf("AWS::DynamoDB::Table", "AppsTable"), "Arn"] },
      Condition: { "ForAllValues:StringEquals": { "dynamodb:LeadingKeys": ["_stream"] } },
    });
    // No other function may publish to the stream.
    const publishers = Object.entries(template.findResources("AWS::IAM::Policy")).filter(([, p]) =>
      JSON.stringify(p).includes('"sns:Publish"'),
    );
    expect(publishers.map(([id]) => id)).toEqual([
      expect.stringMatching(/^ProjectorFunctionServiceRoleDefaultPolicy/),
    ]);
  });

  it("gives the projector the stream's environment: always on, since subscribers are declared", () => {
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: Match.stringLikeRegexp("^Projects"),
      Environment: {
        Variables: Match.objectLike({
          STREAM_TOPIC_ARN: { Ref: idOf("AWS::SNS::Topic", "StreamTopic") },
          STREAM_ALWAYS_ON: "true",
          STREAM_UNPUBLISHED_QUEUE_URL: { Ref: idOf("AWS::SQS::Queue", "StreamUnpublished") },
          APPS_TABLE: { Ref: idOf("AWS::DynamoDB::Table", "AppsTable") },
          EVENTS_MAX_RECEIVE_COUNT: "5",
        }),
      },
    });
  });

  it("refuses an invalid streamSubscribers before building anything, naming the subscriber and the problem", () => {
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-stream-bad-")),
      context: { streamSubscribers: '[{"name":"crm","triggers":["group:*","grup_member_joined"]}]' },
    });
    expect(() => buildApp(app)).toThrow(
      /invalid CDK context: streamSubscribers\.0: "crm": triggers: unknown trigger "grup_member_joined" \(did you mean "group_member_joined"\?/,
    );
  });

  it.skipIf(!cfnLintAvailable)("reports no cfn-lint error on the template with subscribers", async () => {
    expect(await cfnLintErrors(json, ["us-east-1", "eu-west-1", "ap-south-1"])).toEqual([]);
  });
});
