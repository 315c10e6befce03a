import { beforeAll, describe, expect, it } from "vitest";
import { PROJECTION_RANGES } from "../../infra/constructs/activity-analytics";
import { compactDayPrefix } from "../../shared/analytics/compaction";
import { EARLIEST_EVENT_DAY } from "../../shared/analytics/edge-days";
import { conversationsKey, firstSeenKey, membersKey, userSetKey } from "../../shared/analytics/user-sets";
import { addDays, utcDay } from "../../shared/contracts/bucket-layout";
import { importBatchKey, importDayKey } from "../../shared/contracts/import-records";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { logRetentionProblems, pinnedEnvironmentProblems } from "../support/deployed/checks-basics";
import { glueProblems, glueTables, type WrittenObject } from "../support/deployed/checks-glue";
import {
  CLI_DEFAULTS,
  copyOf,
  EVERY_OPTION,
  resourcesOf,
  synthesizedTemplate,
  type TemplateJson,
} from "../support/deployed/template";
import { fixture } from "../support/fixtures";
import { memoryStore } from "../support/ingest";
import { queuedAt } from "../support/queued";

/**
 * Would it work deployed (#48): what the emulators cannot see, checked on the synthesized template
 * (one synth, every option on: `EVERY_OPTION`), the functions' bundles and the requests the code
 * makes. Each check is a function of `test/support/deployed/` that returns the problems it finds;
 * each is proven able to fail on a copy of the template with one defect injected.
 */
let template: TemplateJson;

beforeAll(async () => {
  template = await synthesizedTemplate(EVERY_OPTION);
}, 180_000);

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
    readOn: dayOf(key) > receipt ? dayOf(key) : receipt,
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
