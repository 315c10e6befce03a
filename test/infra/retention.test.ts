import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../infra/app";
import { readDeploymentConfig, streamFactsRetentionDays } from "../../infra/config";
import { prebundleStackFunctions } from "../support/prebundle";

type Rule = {
  Prefix?: string;
  ExpirationInDays?: number;
  NoncurrentVersionExpiration?: { NoncurrentDays: number };
};

/** A stack synthesized with `context`. */
function templateOf(context: Record<string, unknown>): Template {
  // A synth runs cdk-nag: it throws on any unacknowledged finding.
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), "cdk-retention-")),
    context: { stage: "test", alarms: "none", ...context },
  });
  const { stack } = buildApp(app);
  app.synth();
  return Template.fromStack(stack);
}

/** The data bucket's lifecycle rules of a stack synthesized with `context`. */
function rulesOf(context: Record<string, unknown>): Rule[] {
  const buckets = Object.values(templateOf(context).findResources("AWS::S3::Bucket"));
  const data = buckets.find((b) => b.Properties.VersioningConfiguration?.Status === "Enabled");
  return data?.Properties.LifecycleConfiguration.Rules ?? [];
}

const expiryOf = (rules: Rule[], prefix: string) => rules.find((r) => r.Prefix === prefix)?.ExpirationInDays;

beforeAll(() => prebundleStackFunctions(), 120_000);

describe("retention as configuration (#34 item 1: the bucket's data)", () => {
  it("keeps the archive, quarantine and recordings until deleted by default; oversize 30 days, results 7, old versions 30", () => {
    const rules = rulesOf({});
    for (const prefix of ["raw/", "edge/", "quarantine/"]) expect(expiryOf(rules, prefix)).toBeUndefined();
    // recordings/ and compact/ have their storage-class transitions (#59), never an expiry by default.
    for (const prefix of ["recordings/", "compact/"]) expect(expiryOf(rules, prefix)).toBeUndefined();
    expect(rules.some((r) => r.Prefix === "imports/")).toBe(false);
    expect(expiryOf(rules, "oversize/")).toBe(30);
    expect(expiryOf(rules, "athena-results/")).toBe(7);
    expect(
      rules.find((r) => r.NoncurrentVersionExpiration)?.NoncurrentVersionExpiration?.NoncurrentDays,
    ).toBe(30);
  });

  it("expires each kind of data after the days the deployment sets, the archive's Parquet with the archive", () => {
    const rules = rulesOf({
      retainArchiveDays: "400",
      retainQuarantineDays: "200",
      retainRecordingsDays: "90",
      retainOversizeDays: "20",
      retainAthenaResultsDays: "3",
      retainNoncurrentVersionsDays: "10",
    });
    expect(expiryOf(rules, "raw/")).toBe(400);
    expect(expiryOf(rules, "edge/")).toBe(400);
    expect(expiryOf(rules, "compact/")).toBe(400);
    expect(expiryOf(rules, "users/")).toBe(400);
    // Import records outlive the window by a week: the sweep, not the rule, ends them (#50, defect 8).
    expect(expiryOf(rules, "imports/")).toBe(407);
    expect(expiryOf(rules, "quarantine/")).toBe(200);
    expect(expiryOf(rules, "recordings/")).toBe(90);
    expect(expiryOf(rules, "oversize/")).toBe(20);
    expect(expiryOf(rules, "athena-results/")).toBe(3);
    expect(
      rules.find((r) => r.NoncurrentVersionExpiration)?.NoncurrentVersionExpiration?.NoncurrentDays,
    ).toBe(10);
    // The storage-class transitions stay as they were.
    expect(JSON.stringify(rules.find((r) => r.Prefix === "raw/"))).toContain("GLACIER_IR");
  });

  it("sweeps the archive by the day in its keys from the rollup, given retainArchiveDays: the days in its environment, DeleteObject on the day-dated prefixes only (the review of #40, B)", () => {
    // The rollup's S3 statements that delete, and its environment, with and without a retention.
    const rollupOf = (template: Template) => {
      const statements = Object.entries(template.findResources("AWS::IAM::Policy"))
        .filter(([id]) => id.startsWith("AnalyticsRollupFunctionServiceRoleDefaultPolicy"))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>);
      const deletes = statements
        .filter((st) => [st.Action].flat().includes("s3:DeleteObject"))
        .map((st) => JSON.stringify(st.Resource));
      const fn = Object.values(template.findResources("AWS::Lambda::Function")).find((f) =>
        JSON.stringify(f.Properties.Environment ?? {}).includes("ACTIVITY_GRACE_MINUTES"),
      );
      return { deletes, env: fn?.Properties.Environment.Variables as Record<string, unknown> };
    };
    const kept = rollupOf(templateOf({}));
    const swept = rollupOf(templateOf({ retainArchiveDays: "400" }));
    // Without a retention: no sweep; it deletes only under compact/ (a day's compaction replaced).
    expect(kept.env).not.toHaveProperty("RETAIN_ARCHIVE_DAYS");
    expect(kept.deletes.join()).toMatch(/compact\/\*/);
    expect(kept.deletes.join()).not.toMatch(/(raw|edge|users|imports)\/\*/);
    // With one: the days, and DeleteObject on the day-dated prefixes, never on the rest.
    expect(swept.env.RETAIN_ARCHIVE_DAYS).toBe("400");
    const sweepGrant = swept.deletes.find((r) => r.includes("raw/*")) ?? "";
    for (const prefix of ["raw", "edge", "users", "imports"]) expect(sweepGrant).toContain(`/${prefix}/*`);
    expect(swept.deletes.join()).not.toMatch(/(quarantine|recordings|oversize|rollup|erasures)\//);
  });

  it("refuses a retention S3 would refuse or that would lose what the DLQ still holds, naming the key", () => {
    expect(() => readDeploymentConfig({ retainArchiveDays: "100" })).toThrow(
      /retainArchiveDays: 100 must be after archiveGlacierDays \(180\)/,
    );
    expect(() => readDeploymentConfig({ retainQuarantineDays: "180" })).toThrow(/retainQuarantineDays: 180/);
    expect(() => readDeploymentConfig({ retainOversizeDays: "10" })).toThrow(/retainOversizeDays/);
    expect(readDeploymentConfig({ retainArchiveDays: "181" }).retainArchiveDays).toBe(181);
  });
});

describe("table items expire after the archive that could replay them (#34 item 1: the tables)", () => {
  /** Each projection table's TTL attribute, and the projector's ITEM_EXPIRY_DAYS, of a stack synthesized with `context`. */
  function expiryOf(context: Record<string, unknown>) {
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-ttl-")),
      context: { stage: "test", alarms: "none", ...context },
    });
    const { stack } = buildApp(app);
    app.synth();
    const template = Template.fromStack(stack);
    const ttl = Object.entries(template.findResources("AWS::DynamoDB::Table")).flatMap(([id, t]) =>
      t.Properties.TimeToLiveSpecification
        ? [[id.replace(/Tables|[0-9A-F]{8}$/g, ""), t.Properties.TimeToLiveSpecification]]
        : [],
    );
    const projector = Object.values(template.findResources("AWS::Lambda::Function")).find(
      (f) =>
        f.Properties.Environment?.Variables?.RECORDINGS_QUEUE_URL &&
        f.Properties.Environment?.Variables?.GROUPS_TABLE,
    );
    return { ttl, env: projector?.Properties.Environment.Variables.ITEM_EXPIRY_DAYS };
  }

  it("keeps every item by default: no TTL, nothing for the projector", () => {
    expect(expiryOf({})).toEqual({ ttl: [], env: undefined });
  });

  it("turns TTL on for the tables given a window, and tells the projector the days", () => {
    const { ttl, env } = expiryOf({
      retainArchiveDays: "400",
      expireEndedSessionsDays: "402",
      expireOfflinePresenceDays: "500",
    });
    expect(ttl).toEqual([
      ["Presence", { AttributeName: "expiresAt", Enabled: true }],
      ["Sessions", { AttributeName: "expiresAt", Enabled: true }],
    ]);
    expect(env).toBe("sessions=402,presence=500");
  });

  it("refuses a window without the archive's retention, or shorter than it and 2 days, naming the key", () => {
    expect(() => readDeploymentConfig({ expireOfflinePresenceDays: "400" })).toThrow(
      /expireOfflinePresenceDays: .*set retainArchiveDays too/,
    );
    expect(() =>
      readDeploymentConfig({ retainArchiveDays: "400", expireLeftMembershipsDays: "401" }),
    ).toThrow(/expireLeftMembershipsDays: 401 must be at least retainArchiveDays \+ 2 \(402\)/);
  });
});

describe("the dead-letter queues keep a message as long as the deployment says (#34 item 1, #48 item 2)", () => {
  /** Each queue's retention and, for a queue with a DLQ, its DLQ's (seconds), by logical id. */
  const retentions = (context: Record<string, unknown>) => {
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), "cdk-dlq-")),
      context: { stage: "test", alarms: "none", ...context },
    });
    const { stack } = buildApp(app);
    app.synth();
    const queues = Template.fromStack(stack).findResources("AWS::SQS::Queue");
    const seconds = (id: string) => Number(queues[id]?.Properties.MessageRetentionPeriod ?? 345_600);
    return Object.entries(queues).flatMap(([id, q]) => {
      const dlq = q.Properties.RedrivePolicy?.deadLetterTargetArn?.["Fn::GetAtt"]?.[0];
      return typeof dlq === "string" ? [{ id, own: seconds(id), deadLetters: seconds(dlq) }] : [];
    });
  };

  it("14 days by default (SQS's maximum), longer than the 4 days of their source queues", () => {
    const queues = retentions({});
    expect(queues.map((q) => q.id).sort()).toEqual([
      expect.stringMatching(/^EventsQueue/),
      expect.stringMatching(/^RecordingsQueue/),
    ]);
    for (const q of queues) expect(q).toMatchObject({ own: 345_600, deadLetters: 1_209_600 });
  });

  it("refuses a DLQ retention not longer than its source's, naming the key, and never more than 14 days", () => {
    expect(() => readDeploymentConfig({ retainDeadLettersDays: "4" })).toThrow(
      /retainDeadLettersDays: 4 must be longer than the events and recordings queues' retention \(4 days\)/,
    );
    expect(() => readDeploymentConfig({ retainDeadLettersDays: "15" })).toThrow(/retainDeadLettersDays/);
    const subscribers = JSON.stringify([{ name: "crm" }]);
    expect(() =>
      readDeploymentConfig({
        streamSubscribers: subscribers,
        retainDeadLettersDays: "9",
        retainStreamFactsDays: "9",
      }),
    ).toThrow(
      /retainDeadLettersDays: 9 must be longer than the stream subscribers' queues' retention \(retainStreamFactsDays: 9\)/,
    );
    // Not given, a subscriber's queue keeps one day less than a shorter DLQ (10 days at most).
    expect(streamFactsRetentionDays(readDeploymentConfig({ retainDeadLettersDays: "7" }))).toBe(6);
    expect(streamFactsRetentionDays(readDeploymentConfig({}))).toBe(10);
  });
});
