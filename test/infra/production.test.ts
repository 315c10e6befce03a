import { App } from "aws-cdk-lib";
import { beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../infra/app";
import { readDeploymentConfig } from "../../infra/config";
import {
  alarmActionProblems,
  asyncRetryProblems,
  doorProblems,
  functionAlarmProblems,
  keptDataProblems,
  servicePrincipalProblems,
} from "../support/deployed/checks-production";
import { copyOf, resourcesOf, synthesizedTemplate, type TemplateJson } from "../support/deployed/template";
import { cfnLintAvailable, cfnLintErrors } from "./cfn-lint";

/**
 * In production (#60): the door, where the alarms go, what survives, checked on the synthesized
 * templates. Each check is a function of `test/support/deployed/checks-production.ts`, proven
 * able to fail on a copy of the template with one defect injected.
 */
const TOKEN = "3f9c0e6a7b8d4c2e1f0a9b8c7d6e5f4a";
const DEPLOYER_TOPIC = "arn:aws:sns:eu-west-1:123456789012:ops-alarms";
const PRODUCTION = {
  stage: "production",
  webhookPathToken: TOKEN,
  alarmEmail: "ops@example.com",
  alarmTopicArn: DEPLOYER_TOPIC,
  alarmSlack: JSON.stringify({ workspaceId: "T0123ABCD", channelId: "C0123ABCD" }),
  alarmTeams: JSON.stringify({
    teamId: "00000000-0000-4000-8000-000000000001",
    tenantId: "00000000-0000-4000-8000-000000000002",
    channelId: "19%3achannel%40thread.tacv2",
  }),
  capacityMode: "provisioned",
  capacityInitialWriteUnits: "40",
  capacityInitialReadUnits: "20",
  reconcileEveryMinutes: "60",
  reconcileApps: JSON.stringify({ app1: "us" }),
  recordingApiKeysSecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:recording-keys-AbCdEf",
  ingestReservedConcurrency: "50",
  replicaRegion: "eu-central-1",
  replicaBucketName: "webhook-archive-replica",
  customDomainName: "webhooks.example.com",
  existingResources: JSON.stringify({
    tables: {
      Sessions: "WebhookBackend-prod-TablesSessions0A1B2C3D-1A2B3C4D5E6F",
      Apps: "WebhookBackend-prod-AppsTable9F8E7D6C-6F5E4D3C2B1A",
    },
    dataBucket: "webhookbackend-prod-databucket1a2b3c4d-5e6f7a8b9c0d",
  }),
  customDomainCertificateArn:
    "arn:aws:acm:eu-west-1:123456789012:certificate/1234abcd-12ab-34cd-56ef-1234567890ab",
} as const;

type WithOutputs = TemplateJson & { Outputs?: Record<string, { Value: unknown }> };
let template: WithOutputs;

beforeAll(async () => {
  template = await synthesizedTemplate(PRODUCTION);
}, 240_000);

/** The logical id of the first resource of a type whose id starts with `prefix`. */
function idOf(t: TemplateJson, type: string, prefix: string): string {
  const found = resourcesOf(t, type).find(([id]) => id.startsWith(prefix));
  if (!found) throw new Error(`no ${type} ${prefix}`);
  return found[0];
}

/** The properties of a resource of a (copied) template, to read or change. */
function propsOf(t: TemplateJson, id: string): Record<string, unknown> {
  const props = t.Resources[id]?.Properties;
  if (!props) throw new Error(`no properties on ${id}`);
  return props;
}

describe("the door: a secret path with its own throttle, a custom domain", () => {
  it("routes only POST /webhook/<token>, throttled on its own, and the WebhookUrl names it", () => {
    expect(doorProblems(template, TOKEN)).toEqual([]);
    const broken = copyOf(template) as WithOutputs;
    const stage = idOf(broken, "AWS::ApiGatewayV2::Stage", "WebhookApiStage");
    delete propsOf(broken, stage).RouteSettings;
    expect(doorProblems(broken, TOKEN)).toEqual([
      `${stage}: POST /webhook/${TOKEN} has no throttle of its own`,
    ]);
  });

  it("serves the custom domain alone: its certificate, the mapping, the execute-api endpoint off", () => {
    const [, domain] = resourcesOf(template, "AWS::ApiGatewayV2::DomainName")[0] ?? [];
    expect(domain?.Properties).toMatchObject({
      DomainName: PRODUCTION.customDomainName,
      DomainNameConfigurations: [{ CertificateArn: PRODUCTION.customDomainCertificateArn }],
    });
    expect(resourcesOf(template, "AWS::ApiGatewayV2::ApiMapping")).toHaveLength(1);
    const [, api] = resourcesOf(template, "AWS::ApiGatewayV2::Api")[0] ?? [];
    expect(api?.Properties?.DisableExecuteApiEndpoint).toBe(true);
    expect(JSON.stringify(template.Outputs?.WebhookUrl?.Value)).toBe(
      JSON.stringify(`https://${PRODUCTION.customDomainName}/webhook/${TOKEN}`),
    );
  });

  it("refuses a token too short to be secret, and a domain without its certificate", () => {
    expect(() => readDeploymentConfig({ webhookPathToken: "short" })).toThrow(
      /webhookPathToken: expected 16 to 128/,
    );
    expect(() => readDeploymentConfig({ customDomainName: "webhooks.example.com" })).toThrow(
      /customDomainName and customDomainCertificateArn: give both/,
    );
  });
});

describe("alarms reach a person", () => {
  it("notifies the alarm topic and the deployer's topic from every alarm, on ALARM and on OK", () => {
    const topic = { Ref: idOf(template, "AWS::SNS::Topic", "MonitoringAlarms") };
    expect(alarmActionProblems(template, [topic, DEPLOYER_TOPIC])).toEqual([]);
    const broken = copyOf(template);
    const alarm = idOf(broken, "AWS::CloudWatch::Alarm", "AnalyticsRollupFailed");
    delete propsOf(broken, alarm).OKActions;
    expect(alarmActionProblems(broken, [topic, DEPLOYER_TOPIC])).toEqual([
      `${alarm}: OKActions do not notify ${JSON.stringify(topic)}`,
      `${alarm}: OKActions do not notify ${JSON.stringify(DEPLOYER_TOPIC)}`,
    ]);
  });

  it("posts the alarm topic to Slack and Teams through AWS Chatbot, and e-mails it", () => {
    const topic = { Ref: idOf(template, "AWS::SNS::Topic", "MonitoringAlarms") };
    const [, slack] = resourcesOf(template, "AWS::Chatbot::SlackChannelConfiguration")[0] ?? [];
    expect(slack?.Properties).toMatchObject({ SlackWorkspaceId: "T0123ABCD", SlackChannelId: "C0123ABCD" });
    expect(slack?.Properties?.SnsTopicArns).toEqual([topic]);
    const [, teams] = resourcesOf(template, "AWS::Chatbot::MicrosoftTeamsChannelConfiguration")[0] ?? [];
    expect(teams?.Properties).toMatchObject({
      TeamId: "00000000-0000-4000-8000-000000000001",
      TeamsTenantId: "00000000-0000-4000-8000-000000000002",
      TeamsChannelId: "19%3achannel%40thread.tacv2",
    });
    expect(teams?.Properties?.SnsTopicArns).toEqual([topic]);
    const email = resourcesOf(template, "AWS::SNS::Subscription").find(
      ([, s]) => s.Properties?.Protocol === "email",
    );
    expect(email?.[1].Properties?.TopicArn).toEqual(topic);
    expect(template.Outputs?.AlarmDestinations?.Value).toBe(
      "alarmEmail, alarmTopicArn, alarmSlack, alarmTeams",
    );
  });

  it("refuses a deployment that says nothing of its alarms; alarms=none is the explicit choice", () => {
    const silent = new App({ context: { stage: "silent" } });
    expect(() => buildApp(silent)).toThrow(
      /alarms: say where the alarms go .* or that they go nowhere \(-c alarms=none\)/,
    );
    expect(() => buildApp(new App({ context: { stage: "none", alarms: "none" } }))).not.toThrow();
  });

  it("alarms on every function's errors and throttles, the reconciler's and the rollup's included", () => {
    expect(functionAlarmProblems(template)).toEqual([]);
    const broken = copyOf(template);
    const reconciler = idOf(broken, "AWS::Lambda::Function", "ReconcilerFunction");
    const [throttles] =
      resourcesOf(broken, "AWS::CloudWatch::Alarm").find(
        ([, a]) =>
          a.Properties?.MetricName === "Throttles" && JSON.stringify(a).includes(`"Ref":"${reconciler}"`),
      ) ?? [];
    delete broken.Resources[throttles ?? ""];
    expect(functionAlarmProblems(broken)).toEqual([`${reconciler}: no Throttles alarm`]);
  });

  it("alarms on throttled requests to each projection table in provisioned mode", () => {
    for (const table of ["Sessions", "Groups", "Presence", "Memberships"]) {
      const id = idOf(template, "AWS::DynamoDB::Table", `Tables${table}`);
      const alarm = resourcesOf(template, "AWS::CloudWatch::Alarm").find(([alarmId]) =>
        alarmId.startsWith(`Monitoring${table}Throttled`),
      );
      const metrics = JSON.stringify(alarm?.[1].Properties?.Metrics);
      expect(metrics).toContain('"MetricName":"ThrottledRequests"');
      expect(metrics).toContain(`"Ref":"${id}"`);
    }
  });

  it("warns a day before SQS deletes a message of the events or recordings queue (an expired message never reaches the DLQ)", () => {
    for (const name of ["Events", "Recordings"]) {
      const [, alarm] =
        resourcesOf(template, "AWS::CloudWatch::Alarm").find(([id]) =>
          id.startsWith(`Monitoring${name}ExpiresSoon`),
        ) ?? [];
      expect(alarm?.Properties).toMatchObject({
        MetricName: "ApproximateAgeOfOldestMessage",
        Threshold: 3 * 86_400,
      });
    }
  });
});

describe("what survives", () => {
  it("retains every table, bucket, queue, secret and key, with deletion protection on the tables", () => {
    expect(keptDataProblems(template)).toEqual([]);
    const broken = copyOf(template);
    const queue = idOf(broken, "AWS::SQS::Queue", "EventsQueue");
    const table = idOf(broken, "AWS::DynamoDB::Table", "TablesSessions");
    delete (broken.Resources[queue] as { DeletionPolicy?: string }).DeletionPolicy;
    propsOf(broken, table).DeletionProtectionEnabled = false;
    expect(keptDataProblems(broken).sort()).toEqual(
      [
        `${table}: DeletionProtectionEnabled is not true`,
        `${queue} (AWS::SQS::Queue) is not retained: DeletionPolicy undefined`,
      ].sort(),
    );
  });
});

describe("deploying onto what a deleted stack left", () => {
  it("names the tables and the bucket given, so that --import-existing-resources imports them", () => {
    const existing = JSON.parse(PRODUCTION.existingResources);
    expect(propsOf(template, idOf(template, "AWS::DynamoDB::Table", "TablesSessions")).TableName).toBe(
      existing.tables.Sessions,
    );
    expect(propsOf(template, idOf(template, "AWS::DynamoDB::Table", "AppsTable")).TableName).toBe(
      existing.tables.Apps,
    );
    expect(
      propsOf(template, idOf(template, "AWS::DynamoDB::Table", "TablesGroups")).TableName,
    ).toBeUndefined();
    expect(propsOf(template, idOf(template, "AWS::S3::Bucket", "DataBucket")).BucketName).toBe(
      existing.dataBucket,
    );
  });

  it("refuses a table id that is not one of the stack's", () => {
    expect(() => readDeploymentConfig({ existingResources: '{"tables":{"Session":"x-table"}}' })).toThrow(
      /existingResources\.tables: Unrecognized key: "Session"/,
    );
  });
});

describe("another region", () => {
  it("replicates the raw archive, quarantine and import records to the copy's bucket, and the generated secrets to its region", () => {
    const bucket = propsOf(template, idOf(template, "AWS::S3::Bucket", "DataBucket"));
    const rules = (bucket.ReplicationConfiguration as { Rules: Array<Record<string, unknown>> }).Rules;
    expect(rules.map((r) => (r.Filter as { Prefix: string }).Prefix)).toEqual([
      "raw/",
      "quarantine/",
      "imports/",
    ]);
    for (const rule of rules)
      expect(rule).toMatchObject({
        Status: "Enabled",
        Destination: {
          Bucket: { "Fn::Join": ["", ["arn:", { Ref: "AWS::Partition" }, ":s3:::webhook-archive-replica"]] },
        },
      });
    const secrets = resourcesOf(template, "AWS::SecretsManager::Secret");
    expect(secrets.length).toBeGreaterThan(0);
    for (const [, secret] of secrets)
      expect(secret.Properties?.ReplicaRegions).toEqual([{ Region: "eu-central-1" }]);
  });
});

describe("the smaller items", () => {
  it("gives the scheduled functions no asynchronous retries of Lambda's own", () => {
    expect(asyncRetryProblems(template)).toEqual([]);
    const broken = copyOf(template);
    const configs = resourcesOf(broken, "AWS::Lambda::EventInvokeConfig");
    expect(configs).toHaveLength(2); // the rollup's and the reconciler's
    const config = propsOf(broken, configs[0]?.[0] ?? "");
    config.MaximumRetryAttempts = 2;
    const fn = (config.FunctionName as { Ref: string }).Ref;
    expect(asyncRetryProblems(broken)).toEqual([
      expect.stringMatching(
        new RegExp(`^${fn} \\(a target of .*\\): Lambda retries its asynchronous invocations$`),
      ),
    ]);
  });

  it("admits CloudWatch to the alarm key for this account's alarms only, and S3's log delivery by bucket policy", () => {
    expect(servicePrincipalProblems(template)).toEqual([]);
    const broken = copyOf(template);
    const key = idOf(broken, "AWS::KMS::Key", "MonitoringTopicKey");
    const statements = (propsOf(broken, key).KeyPolicy as { Statement: Array<Record<string, unknown>> })
      .Statement;
    for (const s of statements) if (JSON.stringify(s.Principal).includes("cloudwatch")) delete s.Condition;
    const logs = idOf(broken, "AWS::S3::Bucket", "DataAccessLogs");
    propsOf(broken, logs).AccessControl = "LogDeliveryWrite";
    expect(servicePrincipalProblems(broken)).toEqual([
      `${key}: CloudWatch may use the key for any account's alarm (no aws:SourceAccount)`,
      `${logs}: a canned ACL ("LogDeliveryWrite"), not a bucket policy`,
    ]);
  });

  it("starts provisioned tables and their indexes at the initial units given, within the bounds", () => {
    for (const [, table] of resourcesOf(template, "AWS::DynamoDB::Table").filter(([id]) =>
      id.startsWith("Tables"),
    )) {
      const units = { ReadCapacityUnits: 20, WriteCapacityUnits: 40 };
      expect(table.Properties?.ProvisionedThroughput).toEqual(units);
      for (const index of (table.Properties?.GlobalSecondaryIndexes as Array<Record<string, unknown>>) ?? [])
        expect(index.ProvisionedThroughput).toEqual(units);
    }
    expect(() =>
      readDeploymentConfig({ capacityMode: "provisioned", capacityInitialWriteUnits: "2000" }),
    ).toThrow(
      /capacityInitialWriteUnits: 2000 is outside capacityMinWriteUnits..capacityMaxWriteUnits \(1..1000\)/,
    );
  });

  it("reserves the ingest's concurrency when asked", () => {
    const ingest = resourcesOf(template, "AWS::Lambda::Function").find(([, f]) =>
      String(f.Properties?.Description).startsWith("Authenticates"),
    );
    expect(ingest?.[1].Properties?.ReservedConcurrentExecutions).toBe(50);
  });
});

describe("the template with every production option", () => {
  it.skipIf(!cfnLintAvailable)(
    "reports no cfn-lint error (Chatbot, the domain, replication, route settings)",
    async () => {
      expect(await cfnLintErrors(JSON.stringify(template), ["us-east-1", "eu-west-1"])).toEqual([]);
    },
    180_000,
  );
});
