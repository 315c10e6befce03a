import { describe, expect, it } from "vitest";
import { readDeploymentConfig } from "../../infra/config";
import {
  loadIngestConfig,
  loadProjectorConfig,
  loadRecorderConfig,
} from "../../shared/config/function-config";
import { DEFAULT_RECORDING_API_KEY_HOSTS } from "../../shared/platform/constants";
import { ConfigurationError, CredentialsFormatError } from "../../shared/platform/errors";

const TABLES = {
  GROUPS_TABLE: "g",
  MEMBERSHIPS_TABLE: "m",
  PRESENCE_TABLE: "p",
  SESSIONS_TABLE: "s",
};

describe("the functions' configuration (environment, read once at cold start)", () => {
  it("reads the ingest's variables, trimmed, with defaults and the apps table of the allowlist", () => {
    const config = loadIngestConfig({
      EVENTS_QUEUE_URL: " http://q ",
      DATA_BUCKET: "b",
      WEBHOOK_CREDENTIALS_SECRET_ID: "arn:secret",
      ALLOWED_APPS_TABLE: " apps ",
    });
    expect(config).toMatchObject({
      eventsQueueUrl: "http://q",
      credentials: { kind: "secret", secretId: "arn:secret", cacheSeconds: 60 },
      maxJsonDepth: 64,
      allowedApps: { tableName: "apps", cacheSeconds: 60 },
    });
    expect(
      loadIngestConfig({
        EVENTS_QUEUE_URL: "q",
        DATA_BUCKET: "b",
        WEBHOOK_USERNAME: "u",
        WEBHOOK_PASSWORD: "p",
      }).allowedApps,
    ).toBeUndefined();
    expect(config.inlineBodyLimitBytes).toBeLessThan(1_048_576);
  });

  it("names the missing variable, and never echoes a credential", () => {
    expect(() =>
      loadIngestConfig({ DATA_BUCKET: "b", WEBHOOK_USERNAME: "u", WEBHOOK_PASSWORD: "p" }),
    ).toThrow(/EVENTS_QUEUE_URL/);
    expect(() => loadIngestConfig({ EVENTS_QUEUE_URL: "q", DATA_BUCKET: "b" })).toThrow(ConfigurationError);
    const bad = () =>
      loadIngestConfig({
        EVENTS_QUEUE_URL: "q",
        DATA_BUCKET: "b",
        WEBHOOK_CREDENTIALS: JSON.stringify({ credentials: [{ username: "u", password: "x".repeat(101) }] }),
      });
    expect(bad).toThrow(CredentialsFormatError);
    expect(bad).not.toThrow(/xxxx/);
    expect(() =>
      loadIngestConfig({ EVENTS_QUEUE_URL: "q", DATA_BUCKET: "b", WEBHOOK_CREDENTIALS: "{" }),
    ).toThrow("WEBHOOK_CREDENTIALS is not JSON");
  });

  it("refuses a number that is not a positive integer", () => {
    expect(() =>
      loadIngestConfig({
        EVENTS_QUEUE_URL: "q",
        DATA_BUCKET: "b",
        WEBHOOK_USERNAME: "u",
        WEBHOOK_PASSWORD: "p",
        MAX_JSON_DEPTH: "1.5",
      }),
    ).toThrow(/MAX_JSON_DEPTH/);
  });

  it("reads the projector's tables and the recorder's limits and API keys", () => {
    expect(loadProjectorConfig({ ...TABLES, DATA_BUCKET: "b", RECORDINGS_QUEUE_URL: "r" }).tables).toEqual({
      groups: "g",
      memberships: "m",
      presence: "p",
      sessions: "s",
    });
    const recorder = loadRecorderConfig({
      SESSIONS_TABLE: "s",
      DATA_BUCKET: "b",
      RECORDING_API_KEYS: '{"app1":"k1"}',
      RECORDER_ALLOW_HTTP: "1",
    });
    expect(recorder).toMatchObject({
      apiKeys: { kind: "static", keys: { app1: "k1" } },
      allowHttp: true,
      limits: { deadlineMs: 840_000, maxBytes: 5 * 1024 ** 3 },
    });
    expect(() =>
      loadRecorderConfig({ SESSIONS_TABLE: "s", DATA_BUCKET: "b", RECORDING_API_KEYS: '{"app1":1}' }),
    ).toThrow(/RECORDING_API_KEYS must be a JSON object/);
  });

  it("reads the projector's stream (#41): none without a topic, and a topic needs its unpublished queue and switch", () => {
    const base = { ...TABLES, DATA_BUCKET: "b", RECORDINGS_QUEUE_URL: "r" };
    expect(loadProjectorConfig(base)).toMatchObject({ maxReceiveCount: 5, stream: undefined });
    const topic = { ...base, STREAM_TOPIC_ARN: "arn:aws:sns:us-east-1:1:t" };
    expect(() => loadProjectorConfig(topic)).toThrow(/STREAM_UNPUBLISHED_QUEUE_URL is required/);
    expect(() => loadProjectorConfig({ ...topic, STREAM_UNPUBLISHED_QUEUE_URL: "u" })).toThrow(/APPS_TABLE/);
    expect(
      loadProjectorConfig({
        ...topic,
        STREAM_UNPUBLISHED_QUEUE_URL: "u",
        APPS_TABLE: "apps",
        EVENTS_MAX_RECEIVE_COUNT: "3",
      }),
    ).toMatchObject({
      maxReceiveCount: 3,
      stream: {
        topicArn: topic.STREAM_TOPIC_ARN,
        unpublishedQueueUrl: "u",
        alwaysOn: false,
        appsTable: "apps",
        switchCacheMs: 60_000,
      },
    });
    expect(
      loadProjectorConfig({ ...topic, STREAM_UNPUBLISHED_QUEUE_URL: "u", STREAM_ALWAYS_ON: "true" }).stream
        ?.alwaysOn,
    ).toBe(true);
  });

  it("reads where the projector finds the erased subjects (#50): the apps table, at its cache period; none without it", () => {
    const base = { ...TABLES, DATA_BUCKET: "b", RECORDINGS_QUEUE_URL: "r" };
    expect(loadProjectorConfig(base).erasedSubjects).toBeUndefined();
    expect(loadProjectorConfig({ ...base, APPS_TABLE: "apps" }).erasedSubjects).toEqual({
      appsTable: "apps",
      cacheMs: 60_000,
    });
    expect(
      loadProjectorConfig({ ...base, APPS_TABLE: "apps", STREAM_SWITCH_CACHE_SECONDS: "1" }).erasedSubjects
        ?.cacheMs,
    ).toBe(1000);
  });
});

describe("the recorder's API-key hosts (RECORDER_API_KEY_HOSTS)", () => {
  const base = { SESSIONS_TABLE: "s", DATA_BUCKET: "b" };

  it("default to the platform's own domains", () => {
    expect(loadRecorderConfig(base).apiKeyHosts).toEqual([...DEFAULT_RECORDING_API_KEY_HOSTS]);
    expect(DEFAULT_RECORDING_API_KEY_HOSTS).toContain("cometchat.io");
  });

  it("take a comma-separated list of host names, and refuse anything else", () => {
    expect(
      loadRecorderConfig({ ...base, RECORDER_API_KEY_HOSTS: "a.example, b.example" }).apiKeyHosts,
    ).toEqual(["a.example", "b.example"]);
    for (const bad of ["https://a.example", "a.example/path", "*.example", "a b"])
      expect(() => loadRecorderConfig({ ...base, RECORDER_API_KEY_HOSTS: bad }), bad).toThrow(
        /RECORDER_API_KEY_HOSTS/,
      );
  });

  it("are a deployment setting, validated with the others", () => {
    expect(readDeploymentConfig({}).recordingApiKeyHosts).toEqual([...DEFAULT_RECORDING_API_KEY_HOSTS]);
    expect(
      readDeploymentConfig({ recordingApiKeyHosts: '["media.example.com"]' }).recordingApiKeyHosts,
    ).toEqual(["media.example.com"]);
    expect(() => readDeploymentConfig({ recordingApiKeyHosts: '["https://x"]' })).toThrow(
      /recordingApiKeyHosts/,
    );
  });
});

describe("the deployment's configuration (CDK context)", () => {
  const fromContext = (context: Record<string, unknown>) => readDeploymentConfig(context);

  it("has a safe default for every key", () => {
    expect(fromContext({})).toMatchObject({
      stage: "prod",
      allowedAppIds: [],
      throttleRateLimit: 500,
      eventsMaxReceiveCount: 5,
      logRetentionDays: 30,
      ingestTracing: false,
    });
  });

  it("refuses a Glacier transition that does not come at least 30 days after Infrequent Access (S3 would refuse it at deploy)", () => {
    expect(() => fromContext({ archiveInfrequentAccessDays: "200", archiveGlacierDays: "120" })).toThrow(
      "archiveGlacierDays: 120 must be at least 30 days after archiveInfrequentAccessDays (200)",
    );
    expect(() => fromContext({ archiveInfrequentAccessDays: "90", archiveGlacierDays: "100" })).toThrow(
      /archiveGlacierDays: 100 must be at least 30 days after archiveInfrequentAccessDays \(90\)/,
    );
    expect(fromContext({ archiveInfrequentAccessDays: "60", archiveGlacierDays: "90" })).toMatchObject({
      archiveInfrequentAccessDays: 60,
      archiveGlacierDays: 90,
    });
  });

  it("reads the README's `-c key=value` forms: JSON lists and numbers arrive as strings", () => {
    expect(
      fromContext({ stage: "dev", allowedAppIds: '["2598234fa1e3b9c","app2"]', throttleRateLimit: "250" }),
    ).toMatchObject({ stage: "dev", allowedAppIds: ["2598234fa1e3b9c", "app2"], throttleRateLimit: 250 });
    expect(fromContext({ ingestTracing: "true" }).ingestTracing).toBe(true);
    expect(fromContext({ ingestTracing: "false" }).ingestTracing).toBe(false);
    expect(() => fromContext({ ingestTracing: "yes" })).toThrow(/ingestTracing/);
  });

  it("refuses an unknown key, naming the closest valid one (a misspelt allowlist must not deploy open)", () => {
    expect(() => fromContext({ allowedAppId: '["a"]' })).toThrow(
      'unknown key "allowedAppId" (did you mean "allowedAppIds"?)',
    );
    expect(() => fromContext({ alarmEmial: "ops@example.com" })).toThrow('did you mean "alarmEmail"?');
    // The CDK's own context (feature flags, aws:cdk settings) is not ours to judge.
    expect(
      fromContext({
        "@aws-cdk/aws-lambda-nodejs:useLatestRuntimeVersion": true,
        "aws:cdk:enable-path-metadata": true,
      }).stage,
    ).toBe("prod");
  });

  it("wants whole numbers in range, an e-mail that looks like one, and ARNs, and says the expected form", () => {
    expect(() => fromContext({ throttleRateLimit: "2.5" })).toThrow(
      /throttleRateLimit: expected a whole number from 1 to 10000/,
    );
    expect(() => fromContext({ projectorMaxConcurrency: "1" })).toThrow(/projectorMaxConcurrency/);
    expect(() => fromContext({ alarmEmail: "ops" })).toThrow(/alarmEmail: expected an e-mail address/);
    expect(() => fromContext({ credentialsSecretArn: "my-secret" })).toThrow(
      /expected an ARN \(arn:aws:secretsmanager:/,
    );
  });

  it("sizes the edge from the account's peak: the throttle admits the peak plus its headroom, the projector drains twice that", () => {
    // The defaults: a peak of 250 deliveries/s with 100% headroom is the 500/s, bursts of 1,000, of before.
    expect(fromContext({})).toMatchObject({
      peakEventsPerSecond: 250,
      throttleHeadroomPercent: 100,
      throttleRateLimit: 500,
      throttleBurstLimit: 1000,
      projectorMaxConcurrency: 5,
    });
    // Context given → rate, burst, projector concurrency. A campaign across many apps (1,600/s at
    // the peak); less headroom; a peak whose headroom the account's regional quota (10,000/s,
    // bursts of 5,000) cuts; values given kept as given.
    const sized: Array<[Record<string, string>, [number, number, number]]> = [
      [{ peakEventsPerSecond: "1600" }, [3200, 5000, 7]],
      [{ peakEventsPerSecond: "1000", throttleHeadroomPercent: "50" }, [1500, 3000, 5]],
      [{ peakEventsPerSecond: "8000" }, [10_000, 5000, 20]],
      [{ throttleRateLimit: "800", throttleBurstLimit: "900" }, [800, 900, 5]],
    ];
    for (const [context, [rate, burst, concurrency]] of sized)
      expect(fromContext(context)).toMatchObject({
        throttleRateLimit: rate,
        throttleBurstLimit: burst,
        projectorMaxConcurrency: concurrency,
      });
  });

  it("refuses an edge below the expected peak, and a projector that cannot drain what the edge admits", () => {
    expect(() => fromContext({ peakEventsPerSecond: "600", throttleRateLimit: "500" })).toThrow(
      /throttleRateLimit: 500 is below peakEventsPerSecond \(600\): the edge would answer 429 at the expected peak/,
    );
    expect(() => fromContext({ peakEventsPerSecond: "3000", projectorMaxConcurrency: "5" })).toThrow(
      /projectorMaxConcurrency: 5 drains ~5000 events\/s, below throttleRateLimit \(6000\)/,
    );
    expect(() => fromContext({ throttleHeadroomPercent: "-1" })).toThrow(
      /throttleHeadroomPercent: expected a whole number from 0 to 1000/,
    );
  });

  it("reads the capacity mode and its auto-scaling bounds, and refuses bounds that cannot hold", () => {
    expect(fromContext({})).toMatchObject({ capacityMode: "on-demand" });
    expect(
      fromContext({ capacityMode: "provisioned", capacityMaxWriteUnits: "200", capacityTargetPercent: "50" }),
    ).toMatchObject({
      capacityMode: "provisioned",
      capacityTargetPercent: 50,
      capacityMinWriteUnits: 1,
      capacityMaxWriteUnits: 200,
      capacityMinReadUnits: 1,
      capacityMaxReadUnits: 1000,
    });
    expect(() => fromContext({ capacityMode: "provisoned" })).toThrow(/capacityMode/);
    expect(() => fromContext({ capacityMode: "provisioned", capacityTargetPercent: "95" })).toThrow(
      /capacityTargetPercent: .*90/,
    );
    expect(() =>
      fromContext({ capacityMode: "provisioned", capacityMinReadUnits: "50", capacityMaxReadUnits: "10" }),
    ).toThrow("capacityMinReadUnits: 50 is above capacityMaxReadUnits (10)");
    // A provisioned-mode key with on-demand capacity would do nothing: refused, not ignored.
    expect(() => fromContext({ capacityMinWriteUnits: "5" })).toThrow(
      'capacityMinWriteUnits: applies only with capacityMode "provisioned"',
    );
  });

  it("refuses a batch of more than 10 without a batching window (SQS's rule, refused only at deploy otherwise)", () => {
    expect(() => fromContext({ projectorBatchingWindowSeconds: "0" })).toThrow(
      "projectorBatchingWindowSeconds: 0 with projectorBatchSize 200: a batch of more than 10 needs a window of at least 1 s",
    );
    expect(
      fromContext({ projectorBatchingWindowSeconds: "0", projectorBatchSize: "10" }).projectorBatchSize,
    ).toBe(10);
  });

  it("names the key whose value is wrong", () => {
    expect(() => fromContext({ stage: "Prod!" })).toThrow(/invalid CDK context: stage/);
    expect(() => fromContext({ allowedAppIds: "app1" })).toThrow(/allowedAppIds/);
  });
});
