import { beforeAll, describe, expect, it } from "vitest";
import { PROJECTION_RANGES } from "../../infra/constructs/archive-glue-tables";
import { compactDayPrefix } from "../../shared/analytics/compaction";
import { EARLIEST_EVENT_DAY } from "../../shared/analytics/edge-days";
import { conversationsKey, firstSeenKey, membersKey, userSetKey } from "../../shared/analytics/user-sets";
import { addDays, utcDay } from "../../shared/contracts/bucket-layout";
import { importBatchKey, importDayKey } from "../../shared/contracts/import-records";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { deliveryEnvelope, streamMessage } from "../../shared/stream/envelope";
import { logRetentionProblems, pinnedEnvironmentProblems } from "../support/deployed/checks-basics";
import { glueProblems, glueTables, type WrittenObject } from "../support/deployed/checks-glue";
import {
  functionIds,
  grantCoverage,
  iamProblems,
  keptCommands,
  withRecorded,
} from "../support/deployed/checks-iam";
import { environmentProblems, queueProblems, subscriptionProblems } from "../support/deployed/checks-wiring";
import type { IamRequest } from "../support/deployed/iam";
import { recordedRequests } from "../support/deployed/recorded-requests";
import { type FunctionRun, recordedRun } from "../support/deployed/recorded-run";
import {
  CLI_DEFAULTS,
  copyOf,
  EVERY_OPTION,
  resourcesOf,
  synthesizedTemplate,
  type TemplateJson,
} from "../support/deployed/template";
import { usageOf } from "../support/deployed/usage";
import { fixture } from "../support/fixtures";
import { memoryStore } from "../support/ingest";
import { queuedAt } from "../support/queued";

/**
 * Would it work deployed (#48): what the emulators cannot see, checked on the synthesized template
 * (one synth, every option on: `EVERY_OPTION`), the functions' bundles and the requests the code
 * makes. Each check is a function of `test/support/deployed/` that returns the problems it finds;
 * each is proven able to fail on a copy of the template with one defect injected.
 *
 * The requests each function makes are recorded (`recordedRun`): one short run of the pipeline
 * through the five functions' real handlers on DynamoDB Local and fauxqs, each behind a recording
 * proxy (the ingest's deliveries, the projector with the stream on, the recorder's multipart
 * upload, the reconciler, the rollup's passes, compaction, absent-object reads and expiry sweep),
 * each request checked against that function's policy in the template, its conditions evaluated
 * on what it carried (a listing's `s3:prefix`, a key's `dynamodb:LeadingKeys`). The reviewed model
 * (`usageOf`) keeps only what the run cannot drive, each with why: what AWS sends with a
 * function's credentials (Lambda's polling of its queue, Athena's reads and writes; no emulator
 * does either), and the paths the run does not provoke (a write that lost a race re-reading its
 * item, SNS refusing a publish, a failed multipart upload, a query stopped at its deadline, what
 * needs Athena's rows: its stand-in answers none). Secrets Manager and Athena are answered by the
 * proxy (no emulator).
 */
let template: TemplateJson;
/** The SDK commands each function's bundle keeps, by service name. */
let kept: Record<string, string[]>;
/** What each function did in the run. */
let runs: Record<string, FunctionRun>;
/** How long the run took (printed: the suite's cost of recording). */
let runMs = 0;

beforeAll(async () => {
  template = await synthesizedTemplate(EVERY_OPTION);
  kept = Object.fromEntries(
    (["ingest", "projector", "recorder", "reconciler", "rollup"] as const).map((s) => [s, keptCommands(s)]),
  );
  // After the synth (the run sets each function's environment in this process).
  const started = performance.now();
  runs = await recordedRun();
  runMs = performance.now() - started;
}, 240_000);

/** The recorded requests of each function, on a template's (or a broken copy's) resources. */
function recordedOn(t: TemplateJson): Record<string, IamRequest[]> {
  const ids = functionIds(t);
  return Object.fromEntries(
    Object.entries(runs).map(([service, run]) => [
      service,
      recordedRequests(t, ids.get(service) ?? "", run.environment, run.calls, SECRETS.kmsKey),
    ]),
  );
}

/** Each function's usage on a template: what it was recorded sending, beside the model. */
function usageOn(t: TemplateJson) {
  return withRecorded(usageOf(t), recordedOn(t));
}

const SECRETS = {
  credentials: EVERY_OPTION.credentialsSecretArn,
  apiKeys: EVERY_OPTION.recordingApiKeysSecretArn,
  kmsKey: EVERY_OPTION.secretsKmsKeyArn,
};

/** The resources of a copy of the template, by logical id prefix (to inject a defect). */
function firstOf(copy: TemplateJson, type: string, prefix: string) {
  const found = resourcesOf(copy, type).find(([id]) => id.startsWith(prefix));
  if (!found) throw new Error(`no ${type} ${prefix}`);
  return found;
}

/** The statements of a function's policy in a copy of the template, to change. */
function policyStatements(copy: TemplateJson, prefix: string): Array<Record<string, unknown>> {
  const [, policy] = firstOf(copy, "AWS::IAM::Policy", prefix);
  const document = policy.Properties?.PolicyDocument as
    | { Statement: Array<Record<string, unknown>> }
    | undefined;
  return document?.Statement ?? [];
}

/** A delivery of `trigger` whose payload's time is `eventTime` (ms), received at `receivedAt`. */
function delivery(trigger: string, eventTime: number, receivedAt: number) {
  const body = fixture(trigger);
  if (trigger === "group_created") body.data.group.createdAt = Math.floor(eventTime / 1000);
  if (trigger === "message_sent") body.data.message.sentAt = Math.floor(eventTime / 1000);
  return queuedAt({ trigger, appId: "app1", body: JSON.stringify(body) }, receivedAt);
}

/**
 * What the writers put under the Glue tables' locations, each with the day a query reads it:
 * the projector's archive of one batch received a minute before midnight (2026-01-02), holding a
 * fact dated as the platform's published examples are (2023), one from a clock a day behind,
 * three days ahead, and one from before 2000 (a clock's error: no edge); a day's compaction
 * folder as the Athena compactor names it (its CTAS's files: Athena names them, without suffix);
 * a closed day's sets; an import's records.
 */
async function writtenObjects(): Promise<WrittenObject[]> {
  const receivedAt = Date.UTC(2026, 0, 2, 23, 59);
  const receipt = utcDay(receivedAt);
  const store = memoryStore();
  await archiveBatch(
    [
      delivery("group_created", Date.UTC(2023, 9, 10), receivedAt),
      delivery("message_sent", Date.UTC(2026, 0, 1, 12), receivedAt),
      delivery("message_sent", Date.UTC(2026, 0, 5, 12), receivedAt + 1),
      delivery("message_sent", Date.UTC(1999, 11, 31), receivedAt + 2),
    ],
    store,
  );
  const dayOf = (key: string) => /date=(\d{4}-\d{2}-\d{2})/.exec(key)?.[1] ?? "";
  const objects = [...store.objects].map(([key, bytes]) => ({
    key,
    bytes,
    readOn: [dayOf(key), receipt].sort()[1] ?? receipt,
  }));
  const gz = new Uint8Array([0x1f, 0x8b, 0]);
  const parquet = new TextEncoder().encode("PAR1");
  return [
    ...objects,
    {
      key: `${compactDayPrefix(receipt)}${"a".repeat(32)}/20260103_000000_00001_abcde_uuid`,
      bytes: parquet,
      readOn: addDays(receipt, 1),
    },
    ...[userSetKey, firstSeenKey, conversationsKey, membersKey].map((key) => ({
      key: key("2023-10-10"),
      bytes: gz,
      readOn: receipt,
    })),
    { key: importDayKey("users", receipt), bytes: gz, readOn: receipt },
    { key: importBatchKey("users", receipt, "d1"), bytes: gz, readOn: receipt },
  ];
}

describe("the Glue tables read what the writers write (#48 item 4)", () => {
  it("every object the writers produce is in a projected partition of its table, in its format", async () => {
    const objects = await writtenObjects();
    // The archive of the batch: raw (its receipt hour), and edges for 2023-10-10, 2026-01-01
    // (behind), 2026-01-03 (the next day, near midnight), 2026-01-05 (ahead); none before 2000.
    expect(
      objects.map((o) => o.key.replace(/[0-9a-f]{16,}/, "…")).filter((k) => k.startsWith("edge/")),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^edge\/date=2023-10-10\//),
        expect.stringMatching(/^edge\/date=2026-01-01\//),
        expect.stringMatching(/^edge\/date=2026-01-03\//),
        expect.stringMatching(/^edge\/date=2026-01-05\//),
      ]),
    );
    expect(objects.some((o) => o.key.startsWith(`edge/date=1999`))).toBe(false);

    expect(glueProblems(template, objects)).toEqual([]);
  });

  it("fails on a table whose date range misses what the writers date (the range of main: 2024-01-01,NOW)", async () => {
    const broken = copyOf(template);
    for (const table of glueTables(broken))
      if (table.Name === "archive_edges" && table.Parameters)
        table.Parameters["projection.date.range"] = "2024-01-01,NOW";

    expect(glueProblems(broken, await writtenObjects())).toEqual([
      expect.stringMatching(
        /edge\/date=2023-10-10\/.*2023-10-10 is outside the projected range 2024-01-01,NOW/,
      ),
    ]);
  });

  it("fails on a table whose format does not read the writers' objects, or whose template names no partition", async () => {
    const broken = copyOf(template);
    for (const table of glueTables(broken)) {
      if (table.Name === "archive_events" && table.Parameters) table.Parameters.classification = "parquet";
      if (table.Name === "day_users" && table.Parameters)
        table.Parameters["storage.location.template"] = JSON.parse(
          JSON.stringify(table.Parameters["storage.location.template"]).replace("date=", "day="),
        );
    }

    const problems = glueProblems(broken, await writtenObjects());

    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^raw\/date=2026-01-02\/hour=23\/.* is JSON lines, archive_events reads parquet/,
        ),
        expect.stringMatching(/^users\/date=2023-10-10\/users.ndjson.gz is not in a location of day_users/),
      ]),
    );
  });

  it("dates edges and day sets from EARLIEST_EVENT_DAY, receipts from 2024", () => {
    expect(PROJECTION_RANGES.archive_edges).toBe(`${EARLIEST_EVENT_DAY},NOW`);
    expect(PROJECTION_RANGES.daySets).toBe(`${EARLIEST_EVENT_DAY},NOW`);
  });
});

describe("the smaller findings of #48 (item 5)", () => {
  it("names no account or region of the synthesizing machine (the CLI's us-east-1): AWS::Region everywhere", () => {
    expect(pinnedEnvironmentProblems(template)).toEqual([]);

    const broken = copyOf(template);
    const [id, topic] = resourcesOf(broken, "AWS::SNS::Topic")[0] ?? [];
    if (topic)
      topic.Properties = { ...topic.Properties, DisplayName: `arn:aws:sns:${CLI_DEFAULTS.region}:x` };
    expect(pinnedEnvironmentProblems(broken)).toEqual([
      `${id} (AWS::SNS::Topic) names us-east-1, the synthesizing CLI's default`,
    ]);
  });

  it("gives every function's log group a retention, the allowed apps' seed provider's included", () => {
    const provider = resourcesOf(template, "AWS::Lambda::Function").find(([id]) =>
      id.startsWith("AWS679f53fac"),
    );
    expect(provider).toBeDefined();
    expect(logRetentionProblems(template)).toEqual([]);

    const broken = copyOf(template);
    const [id, fn] = provider ?? [];
    if (id && broken.Resources[id])
      broken.Resources[id].Properties = { ...fn?.Properties, LoggingConfig: undefined };
    expect(logRetentionProblems(broken)).toEqual([
      `${id}: logs to Lambda's default log group (no retention)`,
    ]);
  });

  it("grants the recorder no BatchGetItem (it reads one session at a time)", () => {
    const [, policy] =
      resourcesOf(template, "AWS::IAM::Policy").find(([id]) =>
        id.startsWith("RecorderFunctionServiceRoleDefaultPolicy"),
      ) ?? [];
    expect(JSON.stringify(policy?.Properties)).toContain("dynamodb:GetItem");
    expect(JSON.stringify(policy?.Properties)).not.toContain("dynamodb:BatchGetItem");
  });
});

describe("each function may do what its code does, and no more (#48: the checks)", () => {
  it("finds the five functions, each with its bundle's commands", () => {
    expect([...functionIds(template).keys()].sort()).toEqual([
      "ingest",
      "projector",
      "reconciler",
      "recorder",
      "rollup",
    ]);
    expect(kept.recorder).toEqual(expect.arrayContaining(["CreateMultipartUpload", "BatchGetItem"]));
  });

  it("grants every request the run recorded and every modelled one, conditions evaluated, and nothing no path uses", () => {
    const recorded = recordedOn(template);
    // The run drove each function: every one sent requests, the rollup its absent-object reads.
    for (const service of functionIds(template).keys()) expect(recorded[service]?.length).toBeGreaterThan(0);
    expect(recorded.rollup).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: "s3:ListBucket",
          context: { "s3:prefix": expect.stringMatching(/^rollup\/date=/) },
        }),
      ]),
    );
    expect(recorded.projector).toEqual(
      expect.arrayContaining([expect.objectContaining({ action: "sns:Publish", via: "PublishBatch" })]),
    );

    const usage = usageOn(template);
    expect(iamProblems(template, usage, kept)).toEqual([]);

    // The report: which grants the run's requests use, which only the model does (nothing unused:
    // the check above fails on a grant no path uses).
    const coverage = grantCoverage(template, usage);
    const count = (by: string) => coverage.filter((c) => c.usedBy === by).length;
    console.log(
      `deployed requests: ${Object.values(recorded).flat().length} recorded in ${Math.round(runMs)} ms; ` +
        `grants used by a recorded request ${count("recorded")}, by the model only ${count("model")}, by nothing ${count("nothing")}`,
    );
    for (const c of coverage.filter((r) => r.usedBy === "model"))
      console.log(`  model only: ${c.service} ${c.action} on ${c.resource}`);
  });

  it("fails on a grant missing: the rollup's ListBucket of an exact ledger key (its missing ledger would read as AccessDenied)", () => {
    const broken = copyOf(template);
    const statements = policyStatements(broken, "AnalyticsRollupFunctionServiceRoleDefaultPolicy");
    const at = statements.findIndex((s) => JSON.stringify(s.Condition ?? {}).includes('"rollup/*"'));
    statements.splice(at, 1);

    const problems = iamProblems(broken, usageOn(broken), kept);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^rollup: not granted s3:ListBucket on arn:DataBucket\w+ \(\{"s3:prefix":"rollup\/date=\d{4}-\d{2}-\d{2}.json"\}\), recorded: its GetObject of an absent key; without it S3 answers a GetObject of a missing key 403, .* undocumented/,
        ),
      ]),
    );
    expect(problems.every((p) => p.startsWith("rollup: not granted s3:ListBucket"))).toBe(true);
  });

  it("fails on a recorded request its function may not send: the projector's publish to the stream", () => {
    const broken = copyOf(template);
    const statements = policyStatements(broken, "ProjectorFunctionServiceRoleDefaultPolicy");
    const at = statements.findIndex((s) => JSON.stringify(s.Action).includes("sns:Publish"));
    statements.splice(at, 1);

    expect(iamProblems(broken, usageOn(broken), kept)).toEqual([
      expect.stringMatching(
        /^projector: not granted sns:Publish on ref:StreamTopic\w+, recorded: its PublishBatch$/,
      ),
    ]);
  });

  it("fails on a condition that no longer admits the request: KMS through another service", () => {
    const broken = copyOf(template);
    for (const s of policyStatements(broken, "ProjectorFunctionServiceRoleDefaultPolicy"))
      if (JSON.stringify(s.Action).includes("kms:GenerateDataKey"))
        s.Condition = { StringEquals: { "kms:ViaService": "sqs.eu-west-1.amazonaws.com" } };

    expect(iamProblems(broken, usageOn(broken), kept)).toEqual([
      expect.stringMatching(
        /^projector: not granted kms:GenerateDataKey on arn:MonitoringTopicKey\w+ .*recorded: its PublishBatch$/,
      ),
      expect.stringMatching(
        /^projector: not granted kms:Decrypt on arn:MonitoringTopicKey\w+ .*recorded: its PublishBatch$/,
      ),
    ]);
  });

  it("fails on a grant no path uses (main's BatchGetItem on the recorder), and on a kept command the model does not send", () => {
    const broken = copyOf(template);
    for (const s of policyStatements(broken, "RecorderFunctionServiceRoleDefaultPolicy"))
      if (JSON.stringify(s.Action).includes("dynamodb:GetItem"))
        s.Action = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem"];
    const withSend = { ...kept, rollup: [...(kept.rollup ?? []), "SendMessage"] };

    expect(iamProblems(broken, usageOn(broken), withSend)).toEqual([
      expect.stringMatching(
        /^recorder: granted dynamodb:BatchGetItem on arn:TablesSessions\w+, which no path uses$/,
      ),
      "rollup: its bundle keeps SendMessage (sqs:SendMessage), which its model neither sends nor lists as unsent",
    ]);
  });

  it("starts each function with the environment the template gives it (its config loader accepts it)", () => {
    expect(environmentProblems(template)).toEqual([]);

    const broken = copyOf(template);
    const [, ingest] = firstOf(broken, "AWS::Lambda::Function", "IngestFunction");
    const env = (ingest.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables;
    delete env?.EVENTS_QUEUE_URL;
    expect(environmentProblems(broken)).toEqual([expect.stringMatching(/^ingest: .*EVENTS_QUEUE_URL/)]);
  });

  it("keeps event source mappings, visibility timeouts, receives and DLQ retention consistent", () => {
    expect(queueProblems(template)).toEqual([]);

    const broken = copyOf(template);
    const [eventsId, events] = firstOf(broken, "AWS::SQS::Queue", "EventsQueue");
    events.Properties = { ...events.Properties, VisibilityTimeout: 60, MessageRetentionPeriod: 1_209_600 };
    const [recordingsId, recordings] = firstOf(broken, "AWS::SQS::Queue", "RecordingsQueue");
    const redrive = recordings.Properties?.RedrivePolicy as Record<string, unknown>;
    recordings.Properties = { ...recordings.Properties, RedrivePolicy: { ...redrive, maxReceiveCount: 3 } };
    expect(queueProblems(broken)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `${eventsId}'s visibility timeout 60 s is under 6 × ProjectorFunction\\w+'s timeout \\+ its window \\(182 s\\)`,
          ),
        ),
        expect.stringMatching(new RegExp(`${recordingsId} dead-letters after 3 receives`)),
        expect.stringMatching(
          new RegExp(`^${eventsId}: its dead-letter queue .* not longer than its 1209600 s`),
        ),
      ]),
    );
  });

  it("subscribes each subscriber's queue so that SNS may send to it, filtered on attributes the publisher sets", () => {
    const delivery = queuedAt(
      { trigger: "group_created", appId: "app1", body: JSON.stringify(fixture("group_created")) },
      1,
    );
    const attributes = Object.keys(streamMessage(deliveryEnvelope(delivery)).attributes);
    expect(subscriptionProblems(template, attributes)).toEqual([]);

    const broken = copyOf(template);
    const [subscriptionId, subscription] = firstOf(
      broken,
      "AWS::SNS::Subscription",
      "StreamSubscribercrmQueue",
    );
    subscription.Properties = { ...subscription.Properties, FilterPolicy: { app: ["app1"] } };
    const [, policy] =
      resourcesOf(broken, "AWS::SQS::QueuePolicy").find(([id]) =>
        id.startsWith("StreamSubscribercrmQueuePolicy"),
      ) ?? [];
    const document = policy?.Properties?.PolicyDocument as
      | { Statement?: Array<Record<string, unknown>> }
      | undefined;
    for (const s of document?.Statement ?? [])
      if (s.Condition)
        s.Condition = { ArnEquals: { "aws:SourceArn": "arn:aws:sns:eu-west-1:123456789012:another" } };
    expect(subscriptionProblems(broken, attributes)).toEqual([
      expect.stringMatching(new RegExp(`^${subscriptionId}: .*'s policy does not let .* send to it`)),
      `${subscriptionId}: filters on "app", an attribute the publisher never sets (appId, trigger, kind)`,
    ]);
  });
});
