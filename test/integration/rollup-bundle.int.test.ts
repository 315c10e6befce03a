import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleFunction, FUNCTION_ENTRIES } from "../../infra/bundling";
import { OUTCOME_METRICS } from "../../shared/platform/outcomes";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../tools/local/emulators";
import { runProcess } from "../support/cli";

const INVOKE = fileURLToPath(new URL("../support/invoke-bundle.mjs", import.meta.url));

// The rollup as the stack bundles it, run in a fresh Node process with no AWS it can reach: the
// archive cannot be listed, so no day runs. That failure must be counted like a day's (the
// `ActivityRollups` failed metric is what the RollupFailed alarm watches), not only thrown.
describe("the bundled rollup, when the archive cannot be listed", () => {
  let dir: string;
  let handlerFile: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "rollup-bundle-"));
    handlerFile = bundleFunction(FUNCTION_ENTRIES.rollup, join(dir, "bundle")).handlerFile;
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("counts ActivityRollups failed, logs why, and fails the invocation", async () => {
    // Prepare: a schedule tick; every AWS call goes to a port nothing listens on.
    const eventsFile = join(dir, "events.json");
    writeFileSync(eventsFile, JSON.stringify([{ source: "aws.events", "detail-type": "Scheduled Event" }]));

    // Act
    const run = await runProcess(process.execPath, [INVOKE, handlerFile, eventsFile], {
      timeout: 120_000,
      env: {
        PATH: process.env.PATH ?? "",
        AWS_REGION: LOCAL_REGION,
        AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
        AWS_MAX_ATTEMPTS: "1",
        LOCAL_AWS_ENDPOINT: "http://127.0.0.1:9",
        LOCAL_DYNAMODB_ENDPOINT: "http://127.0.0.1:9",
        ACTIVITY_TABLE: "activity",
        DATA_BUCKET: "data",
        ATHENA_WORKGROUP: "wg",
        GLUE_DATABASE: "db",
        ACTIVITY_GRACE_MINUTES: "120",
      },
    });

    // Assess: the process fails (Lambda would record an error), after one EMF line counting the
    // failure (stdout) and one error line saying what failed (the logger writes errors to stderr).
    expect(run.status).toBe(1);
    const lines = `${run.stdout}\n${run.stderr}`
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const counted = lines.filter((l) => l.outcome === "failed" && OUTCOME_METRICS.rollup.metric in l);
    // One pass a day for every app (#31): each day of the tick whose archive could not be read is
    // counted once.
    expect(counted.length).toBeGreaterThan(0);
    for (const c of counted) expect(c[OUTCOME_METRICS.rollup.metric]).toBe(1);
    const logged = lines.find((l) => l.message === "rollup failed");
    expect(logged).toMatchObject({
      level: "ERROR",
      outcome: "failed",
      service: "rollup",
      error: { message: expect.stringContaining("ECONNREFUSED") },
    });
  });
});
