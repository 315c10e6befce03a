import { beforeAll, describe, expect, it } from "vitest";
import { readDeploymentConfig } from "../../infra/config";
import {
  bucketsOf,
  type ExpectedLifecycle,
  type LifecycleRuleJson,
  lifecycleProblems,
} from "../support/deployed/checks-lifecycle";
import { copyOf, synthesizedTemplate, type TemplateJson } from "../support/deployed/template";

/** What a deployment with `context` asks of the lifecycle, from its config. */
function expectedOf(context: Record<string, string>): ExpectedLifecycle {
  const c = readDeploymentConfig(context);
  return {
    archive: { infrequentAccessDays: c.archiveInfrequentAccessDays, glacierDays: c.archiveGlacierDays },
    recordings: {
      infrequentAccessDays: c.recordingsInfrequentAccessDays,
      glacierDays: c.recordingsGlacierDays,
      retainDays: c.retainRecordingsDays,
    },
    accessLogDays: c.retainAccessLogDays,
  };
}

const ruleOf = (t: TemplateJson, prefix: string) =>
  (bucketsOf(t).data.Rules ?? []).find((r) => r.Prefix === prefix) as LifecycleRuleJson;

let defaults: TemplateJson;
beforeAll(async () => {
  defaults = await synthesizedTemplate({ stage: "lifecycle" });
}, 120_000);

describe("a lifecycle that runs (#59)", () => {
  it("moves no object under 128 KB; the Parquet and the recordings move; the access log expires after a year: the defaults", () => {
    expect(lifecycleProblems(defaults, expectedOf({}))).toEqual([]);
    expect(bucketsOf(defaults).data.TransitionDefaultMinimumObjectSize).toBe("all_storage_classes_128K");
    // The recordings are kept until deleted: both transitions, no expiry.
    expect(ruleOf(defaults, "recordings/")).toMatchObject({
      Transitions: [
        { StorageClass: "STANDARD_IA", TransitionInDays: 30 },
        { StorageClass: "GLACIER_IR", TransitionInDays: 120 },
      ],
    });
    expect(ruleOf(defaults, "recordings/").ExpirationInDays).toBeUndefined();
    expect(ruleOf(defaults, "compact/").Transitions?.map((t) => t.TransitionInDays)).toEqual([30, 180]);
  });

  it("follows the deployer's days, and leaves out a recording's transition its retention would cut short", async () => {
    const context = {
      stage: "lifecycle",
      retainAccessLogDays: "90",
      recordingsInfrequentAccessDays: "45",
      recordingsGlacierDays: "100",
      retainRecordingsDays: "150",
    };
    const template = await synthesizedTemplate(context);
    expect(lifecycleProblems(template, expectedOf(context))).toEqual([]);
    // 45 + 30 ≤ 150: Infrequent Access; 100 + 90 > 150: no Glacier IR (billed 90 days, kept 50).
    expect(ruleOf(template, "recordings/")).toMatchObject({
      ExpirationInDays: 150,
      Transitions: [{ StorageClass: "STANDARD_IA", TransitionInDays: 45 }],
    });
    expect(bucketsOf(template).accessLog.Rules?.[0]?.ExpirationInDays).toBe(90);
  }, 120_000);

  it("finds each defect injected into a copy of the template", () => {
    const expected = expectedOf({});
    const broken = (change: (t: TemplateJson) => void) => {
      const copy = copyOf(defaults);
      change(copy);
      return lifecycleProblems(copy, expected).join("\n");
    };
    const dataConfig = (t: TemplateJson) =>
      Object.values(t.Resources).find((r) => r.Properties?.LoggingConfiguration)?.Properties
        ?.LifecycleConfiguration as {
        TransitionDefaultMinimumObjectSize?: string;
        Rules: LifecycleRuleJson[];
      };
    // Small objects moved: the bucket's minimum object size left to S3's default of old buckets.
    expect(
      broken((t) => {
        dataConfig(t).TransitionDefaultMinimumObjectSize = "varies_by_storage_class";
      }),
    ).toMatch(/raw\/: moves objects under 128 KB/);
    // The Parquet no longer moves.
    expect(
      broken((t) => {
        for (const r of dataConfig(t).Rules) if (r.Prefix === "compact/") delete r.Transitions;
      }),
    ).toMatch(/compact\/: to Infrequent Access after undefined, not 30/);
    // A recording expired within Glacier IR's 90 days.
    expect(
      broken((t) => {
        for (const r of dataConfig(t).Rules) if (r.Prefix === "recordings/") r.ExpirationInDays = 150;
      }),
    ).toMatch(/recordings\/: expires after 150 days, within GLACIER_IR's 90-day minimum from day 120/);
    // The access log kept forever.
    expect(
      broken((t) => {
        for (const r of Object.values(t.Resources))
          if (r.Type === "AWS::S3::Bucket" && !r.Properties?.LoggingConfiguration)
            delete r.Properties?.LifecycleConfiguration;
      }),
    ).toMatch(/the access log expires after never days, not 365/);
  });

  it("refuses recordings' transitions S3 would refuse, and an access log kept no day, naming the key", () => {
    expect(() =>
      readDeploymentConfig({ recordingsInfrequentAccessDays: "60", recordingsGlacierDays: "89" }),
    ).toThrow(/recordingsGlacierDays: expected a whole number from 90/);
    expect(() =>
      readDeploymentConfig({ recordingsInfrequentAccessDays: "61", recordingsGlacierDays: "90" }),
    ).toThrow("recordingsGlacierDays: 90 must be at least 30 days after recordingsInfrequentAccessDays (61)");
    expect(() => readDeploymentConfig({ retainAccessLogDays: "0" })).toThrow(/retainAccessLogDays/);
    expect(readDeploymentConfig({ retainAccessLogDays: "30" }).retainAccessLogDays).toBe(30);
  });
});
