import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../infra/app";
import { prebundleStackFunctions } from "../support/prebundle";

let template: Template;

beforeAll(async () => {
  await prebundleStackFunctions();
  // A synth runs the cdk-nag packs: it throws on any unacknowledged finding of the analytics too.
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), "cdk-analytics-")),
    context: {
      stage: "test",
      alarms: "none",
      activityEveryMinutes: "30",
      activityGraceMinutes: "90",
      athenaBytesScannedCutoffMb: "2048",
    },
  });
  const { stack } = buildApp(app);
  app.synth();
  template = Template.fromStack(stack);
}, 120_000);

const policyOf = (prefix: string) =>
  JSON.stringify(
    Object.entries(template.findResources("AWS::IAM::Policy")).find(([id]) => id.startsWith(prefix))?.[1],
  );

describe("activity analytics in the stack", () => {
  it("declares the archive as a Glue table with partition projection over receipt date and hour, the app a column", () => {
    template.hasResourceProperties("AWS::Glue::Table", {
      TableInput: Match.objectLike({
        Name: "archive_events",
        PartitionKeys: [Match.objectLike({ Name: "date" }), Match.objectLike({ Name: "hour" })],
        Parameters: Match.objectLike({
          "projection.enabled": "true",
          "projection.date.type": "date",
          "projection.date.format": "yyyy-MM-dd",
          "projection.hour.type": "integer",
          "projection.hour.digits": "2",
          "storage.location.template": {
            "Fn::Join": ["", ["s3://", Match.anyValue(), `/raw/date=\${date}/hour=\${hour}/`]],
          },
        }),
        StorageDescriptor: Match.objectLike({
          SerdeInfo: Match.objectLike({
            SerializationLibrary: "org.openx.data.jsonserde.JsonSerDe",
            Parameters: Match.objectLike({
              "mapping.event_time": "eventtime",
              "mapping.natural_key": "naturalkey",
              "mapping.app": "appid",
            }),
          }),
          Columns: Match.arrayWith([
            Match.objectLike({ Name: "app", Type: "string" }),
            Match.objectLike({ Name: "event_time", Type: "bigint" }),
          ]),
        }),
      }),
    });
  });

  it("declares the edge copies as a second table with the same columns, under edge/", () => {
    template.hasResourceProperties("AWS::Glue::Table", {
      TableInput: Match.objectLike({
        Name: "archive_edges",
        PartitionKeys: [Match.objectLike({ Name: "date" })],
        Parameters: Match.objectLike({
          "projection.enabled": "true",
          "storage.location.template": {
            "Fn::Join": ["", ["s3://", Match.anyValue(), `/edge/date=\${date}/`]],
          },
        }),
        StorageDescriptor: Match.objectLike({
          Columns: Match.arrayWith([Match.objectLike({ Name: "natural_key", Type: "string" })]),
        }),
      }),
    });
  });

  it.each([
    ["day_users", "users/date=", "createdat", "bigint"],
    ["first_seen_users", "users/first-seen/date=", "uid", "string"],
    ["conversations_started", "users/conversations/first-seen/date=", "conversation", "string"],
    ["membership_changes", "users/members/date=", "removed", "boolean"],
    ["imported_users", "imports/users/date=", "importedat", "bigint"],
  ])(
    "declares the day set %s as a table over %s, by closed day, for SQL on Athena",
    (name, prefix, column, type) => {
      template.hasResourceProperties("AWS::Glue::Table", {
        TableInput: Match.objectLike({
          Name: name,
          PartitionKeys: [Match.objectLike({ Name: "date" })],
          Parameters: Match.objectLike({
            "projection.enabled": "true",
            "storage.location.template": {
              "Fn::Join": ["", ["s3://", Match.anyValue(), `/${prefix}\${date}/`]],
            },
          }),
          StorageDescriptor: Match.objectLike({
            Columns: Match.arrayWith([Match.objectLike({ Name: column, Type: type })]),
          }),
        }),
      });
    },
  );

  it("runs queries in a workgroup with encrypted results and the bytes-scanned cutoff, enforced", () => {
    template.hasResourceProperties("AWS::Athena::WorkGroup", {
      WorkGroupConfiguration: Match.objectLike({
        EnforceWorkGroupConfiguration: true,
        BytesScannedCutoffPerQuery: 2048 * 1024 * 1024,
        ResultConfiguration: Match.objectLike({
          EncryptionConfiguration: { EncryptionOption: "SSE_S3" },
          OutputLocation: Match.anyValue(),
        }),
      }),
    });
  });

  it("schedules the rollup every activityEveryMinutes, with the grace period in its environment", () => {
    template.hasResourceProperties("AWS::Events::Rule", { ScheduleExpression: "rate(30 minutes)" });
    template.hasResourceProperties("AWS::Lambda::Function", {
      Description: Match.stringLikeRegexp("activity figures"),
      Environment: { Variables: Match.objectLike({ ACTIVITY_GRACE_MINUTES: "90" }) },
      // No reservation (#48 item 3): Lambda keeps 100 unreserved, so reserving 1 fails stack
      // creation on an account whose quota is below 101; the archive lease serialises overlapping
      // runs instead (test/integration/rollup-overlap).
      ReservedConcurrentExecutions: Match.absent(),
    });
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "ActivityRollups",
      Dimensions: Match.arrayWith([{ Name: "outcome", Value: "failed" }]),
    });
    // A run that fails or times out outside a day's rollup is an error of the function: alarmed too.
    for (const metric of ["Errors", "Throttles"])
      template.hasResourceProperties("AWS::CloudWatch::Alarm", {
        MetricName: metric,
        Dimensions: [
          { Name: "FunctionName", Value: { Ref: Match.stringLikeRegexp("^AnalyticsRollupFunction") } },
        ],
        AlarmActions: [Match.anyValue()],
      });
  });

  it("grants the rollup only its workgroup, the archive table, the activity table and its prefixes", () => {
    const policy = policyOf("AnalyticsRollupFunctionServiceRoleDefaultPolicy");
    expect(policy).toContain("athena:StartQueryExecution");
    // A query still running at the invocation's deadline is stopped.
    expect(policy).toContain("athena:StopQueryExecution");
    expect(policy).toContain('["glue:GetDatabase","glue:GetTable"]');
    expect(policy).toContain(
      '["dynamodb:GetItem","dynamodb:Query","dynamodb:PutItem","dynamodb:UpdateItem","dynamodb:DeleteItem"]',
    );
    expect(policy).toMatch(/raw\/\*/);
    expect(policy).toMatch(/edge\/\*/);
    expect(policy).toContain("/archive_edges");
    expect(policy).toMatch(/athena-results\/\*/);
    // The ledger of its passes, read and rewritten.
    expect(policy).toMatch(/rollup\/\*/);
    expect(policy).not.toMatch(/"(athena|glue|dynamodb|s3):\*"/);
    expect(policy).not.toMatch(/quarantine|recordings\//);
  });

  it("locks what the rollup's SQL can do on Athena: DDL only on the compactor's own compact_* tables, writes only to results, the ledger, compact/ and the user sets (users/)", () => {
    // Athena runs a statement with the caller's permissions: DDL (CREATE/DROP/ALTER TABLE, CTAS,
    // MSCK) needs Glue writes, INSERT needs S3 writes to the table's location. The role may create
    // and drop only the compaction's CTAS tables (compact_<day>_<hash>), never the archive's
    // tables, and write only the workgroup's results, its ledger and the compacted days.
    const statements = Object.entries(template.findResources("AWS::IAM::Policy"))
      .filter(([id]) => id.startsWith("AnalyticsRollupFunctionServiceRoleDefaultPolicy"))
      .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>);
    const actionsOf = (s: Record<string, unknown>) => [s.Action].flat().map(String);
    const actions = statements.flatMap(actionsOf);
    expect(actions.filter((a) => a.startsWith("athena:")).sort()).toEqual([
      "athena:GetQueryExecution",
      "athena:GetQueryResults",
      "athena:StartQueryExecution",
      // Stops a query at the invocation's deadline (#29 item 8): it writes nothing.
      "athena:StopQueryExecution",
    ]);
    expect([...new Set(actions.filter((a) => a.startsWith("glue:")))].sort()).toEqual([
      "glue:CreateTable",
      "glue:DeleteTable",
      "glue:GetDatabase",
      "glue:GetTable",
    ]);
    for (const statement of statements.filter((s) =>
      actionsOf(s).some((a) => /^glue:(Create|Delete)/.test(a)),
    )) {
      const tables = [statement.Resource]
        .flat()
        .map((r) => JSON.stringify(r))
        .filter((r) => r.includes("table/"));
      expect(tables.length).toBeGreaterThan(0);
      for (const table of tables) expect(table).toMatch(/table\/[a-z0-9_]+\/compact_\*/);
    }
    for (const statement of statements.filter((s) => actionsOf(s).some((a) => /^s3:(Put|Delete)/.test(a))))
      expect(JSON.stringify(statement.Resource)).toMatch(
        /^[^*]*(athena-results|rollup|compact|users)\/\*[^*]*$/,
      );
    template.hasResourceProperties("AWS::Athena::WorkGroup", {
      WorkGroupConfiguration: Match.objectLike({ EnforceWorkGroupConfiguration: true }),
    });
  });

  it("reads compacted days through a Parquet table whose folder a query names (partition projection, injected)", () => {
    const table = Object.values(template.findResources("AWS::Glue::Table")).find(
      (t) => t.Properties.TableInput.Name === "archive_compact",
    );
    expect(table?.Properties.TableInput.PartitionKeys.map((k: { Name: string }) => k.Name)).toEqual([
      "day",
      "compaction",
    ]);
    expect(table?.Properties.TableInput.Parameters).toMatchObject({
      "projection.enabled": "true",
      "projection.compaction.type": "injected",
      "projection.day.type": "date",
    });
    expect(JSON.stringify(table?.Properties.TableInput.Parameters["storage.location.template"])).toContain(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the template Athena fills, not ours.
      "compact/date=${day}/${compaction}/",
    );
    expect(table?.Properties.TableInput.StorageDescriptor.SerdeInfo.SerializationLibrary).toContain(
      "Parquet",
    );
  });

  it("lets the projector write edge objects beside the raw archive", () => {
    const policy = policyOf("ProjectorFunctionServiceRoleDefaultPolicy");
    expect(policy).toMatch(/s3:PutObject.*edge\/\*/);
  });
});
