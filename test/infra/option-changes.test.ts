import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replacementProblems } from "../support/deployed/checks-production";
import { copyOf, resourcesOf, synthesizedTemplate, type TemplateJson } from "../support/deployed/template";

/**
 * A changed option never replaces a table, the bucket, a queue or a secret, nor takes a table or
 * the bucket out of the stack (#60): the template of the defaults diffed (`@aws-cdk/cloudformation-diff`,
 * what `cdk diff` prints) against the template with each option of docs/deploy.md's table
 * changed, both ways (turning an option on, and off again).
 *
 * One synth per group of options (a synth is ~8 s on a shared machine; one per key would be
 * minutes of the suite): a replacement names its resource, and its group the options to look at.
 */
const BASE = { stage: "options", alarms: "none" };
const ARN = {
  secret: (name: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}-AbCdEf`,
  key: "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
};

/** Each documented option, changed from its default: grouped by what they touch. */
const GROUPS: Record<string, Record<string, string>> = {
  "the edge and the alarms": {
    webhookPathToken: "3f9c0e6a7b8d4c2e1f0a9b8c7d6e5f4a",
    peakEventsPerSecond: "500",
    throttleHeadroomPercent: "50",
    throttleRateLimit: "800",
    throttleBurstLimit: "1600",
    customDomainName: "webhooks.example.com",
    customDomainCertificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/1234abcd",
    ingestTracing: "true",
    ingestReservedConcurrency: "20",
    restrictApps: "true",
    allowedAppIds: '["app1"]',
    // where the alarms go

    alarmEmail: "ops@example.com",
    alarmTopicArn: "arn:aws:sns:eu-west-1:123456789012:ops-alarms",
    alarmSlack: '{"workspaceId":"T0123","channelId":"C0123"}',
    alarmTeams: JSON.stringify({
      teamId: "00000000-0000-4000-8000-000000000001",
      tenantId: "00000000-0000-4000-8000-000000000002",
      channelId: "19%3achannel%40thread.tacv2",
    }),
    queueAgeAlarmSeconds: "600",
    api5xxAlarmPercent: "5",
    projectorFailedAlarmCount: "20",
    recorderFailedAlarmCount: "5",
    logRetentionDays: "90",
  },
  "retention and capacity": {
    archiveInfrequentAccessDays: "60",
    archiveGlacierDays: "365",
    retainArchiveDays: "400",
    retainQuarantineDays: "400",
    retainRecordingsDays: "400",
    retainOversizeDays: "60",
    retainAthenaResultsDays: "14",
    retainNoncurrentVersionsDays: "60",
    retainDeadLettersDays: "10",
    expireEndedSessionsDays: "402",
    expireLeftMembershipsDays: "402",
    expireOfflinePresenceDays: "402",
    tableDeletionProtection: "false",
    recordingsInfrequentAccessDays: "60",
    recordingsGlacierDays: "180",
    retainAccessLogDays: "400",

    capacityMode: "provisioned",
    capacityTargetPercent: "60",
    capacityMinWriteUnits: "5",
    capacityMaxWriteUnits: "500",
    capacityMinReadUnits: "5",
    capacityMaxReadUnits: "500",
    capacityInitialWriteUnits: "50",
    capacityInitialReadUnits: "50",
    projectorBatchSize: "100",
    projectorBatchingWindowSeconds: "5",
    projectorMaxConcurrency: "10",
    recorderMaxConcurrency: "10",
    eventsMaxReceiveCount: "8",
    recordingsMaxReceiveCount: "8",
    maxRecordingBytes: "1000000",
  },
  "secrets, schedules and the stream": {
    credentialsSecretArn: ARN.secret("webhook-credentials"),
    recordingApiKeysSecretArn: ARN.secret("recording-keys"),
    recordingApiKeyHosts: '["media.example.com"]',
    secretsKmsKeyArn: ARN.key,
    reconcileEveryMinutes: "60",
    reconcileApps: '{"app1":"us"}',
    activityEveryMinutes: "30",
    activityGraceMinutes: "60",
    athenaBytesScannedCutoffMb: "2048",
    replicaRegion: "eu-central-1",
    replicaBucketName: "webhook-archive-replica",

    streamSubscribers: '[{"name":"crm","triggers":["group:*"]}]',
    retainStreamFactsDays: "5",
  },
};

/** Documented keys not diffed, and why. */
const NOT_DIFFED: Record<string, string> = {
  stage: "a renamed stage is a new stack (docs/deploy.md says what becomes of the old one's data)",
  alarms: "the base's own choice (alarms=none); the destinations are in the first group",
  existingResources:
    "for a new stack only: it names the tables and the bucket, and a name given to a running stack's table replaces it (the last test shows the diff says so)",
};

/** The keys of docs/deploy.md's configuration table (its first column). */
function documentedKeys(): string[] {
  const markdown = readFileSync(new URL("../../docs/deploy.md", import.meta.url), "utf8");
  return markdown
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) =>
      [...(line.split("|")[1] ?? "").matchAll(/`([a-z][A-Za-z0-9]*)`/g)].map((m) => m[1] ?? ""),
    );
}

let base: TemplateJson;
const changed: Record<string, TemplateJson> = {};
const nag = process.env.NO_NAG;

beforeAll(async () => {
  // cdk-nag is the stack tests' (test/infra/stack.test.ts): off here, the synths are the diff's.
  process.env.NO_NAG = "1";
  base = await synthesizedTemplate(BASE);
  for (const [group, options] of Object.entries(GROUPS))
    changed[group] = await synthesizedTemplate({ ...BASE, ...options });
}, 480_000);

afterAll(() => {
  if (nag === undefined) delete process.env.NO_NAG;
  else process.env.NO_NAG = nag;
});

describe("changing an option keeps the data (#60)", () => {
  it("diffs every key docs/deploy.md lists (a new key must join a group, or say why not)", () => {
    const diffed = Object.values(GROUPS).flatMap((options) => Object.keys(options));
    const documented = documentedKeys();
    expect(documented.length).toBeGreaterThan(50);
    expect(documented.filter((key) => !diffed.includes(key) && !(key in NOT_DIFFED))).toEqual([]);
    expect(diffed.filter((key) => !documented.includes(key))).toEqual([]);
  });

  it.each(Object.keys(GROUPS))("%s: changing them replaces nothing that holds data, either way", (group) => {
    const after = changed[group] as TemplateJson;
    expect(replacementProblems(base, after)).toEqual([]);
    expect(replacementProblems(after, base)).toEqual([]);
  });

  it("fails on a change that replaces a table (its key), or takes the bucket out of the stack", () => {
    const broken = copyOf(base);
    const [table, resource] = resourcesOf(broken, "AWS::DynamoDB::Table")[0] ?? [];
    (resource?.Properties as Record<string, unknown>).KeySchema = [
      { AttributeName: "other", KeyType: "HASH" },
    ];
    const [bucket] = resourcesOf(broken, "AWS::S3::Bucket").find(([id]) => id.startsWith("DataBucket")) ?? [];
    delete broken.Resources[bucket ?? ""];
    const problems = replacementProblems(base, broken);
    expect(problems).toHaveLength(2);
    expect(problems).toEqual(
      expect.arrayContaining([
        `${table} (AWS::DynamoDB::Table) WILL_REPLACE`,
        expect.stringMatching(new RegExp(`^${bucket} \\(AWS::S3::Bucket\\) leaves the stack`)),
      ]),
    );
  });
});
