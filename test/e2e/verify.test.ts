import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../tools/local/emulators";
import type { VerifyReport } from "../../tools/ops/verify";
import { webhookCli } from "../support/cli";
import { exited, killAll, type StartedProcess, startProcess } from "../support/local-process";

/**
 * `npx webhook verify` against the local stack (`npm start` in its own process): the command a
 * deployer runs against a deployed stack (`--stack`), with the same steps and code, here on the
 * emulators and DuckDB instead of AWS and Athena.
 */
const dir = mkdtempSync(join(tmpdir(), "verify-"));
let stack: StartedProcess;

beforeAll(async () => {
  stack = await startProcess(dir, await freePort(), ["--console-port", "0"]);
}, 300_000);
afterAll(async () => {
  if (stack.child.exitCode === null) {
    stack.child.kill("SIGINT");
    await exited(stack.child);
  }
  killAll();
});

describe("webhook verify", () => {
  it("follows one delivery through the ingest, the archive, the table, the stream and a rollup", async () => {
    const { code, stdout, stderr } = await webhookCli(["verify", "--state-dir", dir, "--json"]);

    const report: VerifyReport = JSON.parse(stdout);
    expect({ code, stderr, steps: report.steps.map((s) => `${s.step} ${s.ok}`) }).toEqual({
      code: 0,
      stderr: "",
      steps: ["delivered true", "archived line true", "table row true", "stream message true", "figure true"],
    });
    expect(report.steps.find((s) => s.step === "figure")?.detail).toMatch(
      /groups_created of webhook-verify on \d{4}-\d{2}-\d{2}: 1$/,
    );
  }, 300_000);
});
