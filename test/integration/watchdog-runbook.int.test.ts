/**
 * Every command the watchdog's alarms tell an operator to run, run as written (#58): the
 * descriptions of `SilentApps` and `RefusedDeliveries` (read from the synthesized template), with
 * `--stack <stack>` pointed at a local stack's state directory and `<appId>` at a connected app.
 * The local stack is what those commands read: its stack.json over the emulators of the global
 * setup, its apps table, its rollup ledger and its refusals (what its log tap writes), and the
 * platform's management API as a small HTTP server (a stand-in of the platform: no client mocked).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import { Metric } from "aws-cdk-lib/aws-cloudwatch";
import { LogGroup } from "aws-cdk-lib/aws-logs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Monitoring } from "../../infra/constructs/monitoring";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { loggedUsername } from "../../shared/platform/log-safe";
import { credentialsFilePath, fileCredentialStore } from "../../tools/local/credentials-store";
import { createAppsTable } from "../../tools/local/provision";
import { appendRefusal } from "../../tools/local/refusals";
import { writeStackInfo } from "../../tools/local/state";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { webhookCli } from "../support/cli";

const { dynamo, s3 } = testClients();
const APP = "runbook-app";
const USERNAME = "webhook-runbook";
let dir = "";
let server: Server;
let managementUrl = "";
/** The platform's webhooks by app (the stand-in's state). */
const hooks = new Map<string, Array<Record<string, unknown>>>();

/** The commands of the watchdog's alarm descriptions, as the template holds them. */
function runbookCommands(): string[] {
  const stack = new Stack(new App(), "Runbook");
  new Monitoring(stack, "Monitoring", {
    api: new HttpApi(stack, "Api"),
    apiThrottled: new Metric({ namespace: "WebhookBackend", metricName: "EdgeThrottledRequests" }),
    functions: {},
    queues: {},
    ingestLogs: new LogGroup(stack, "IngestLogs"),
  });
  const alarms = Object.values(Template.fromStack(stack).findResources("AWS::CloudWatch::Alarm"));
  const descriptions = alarms
    .map((a) => String(a.Properties?.AlarmDescription ?? ""))
    .filter((d) => d.includes("npx webhook apps"));
  return descriptions.flatMap((d) =>
    [...d.matchAll(/npx webhook [^;.]*?(?=[;.]|$| says| names| reads| sets)/g)].map((m) => m[0].trim()),
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "runbook-"));
  const appsTable = uniqueName("apps");
  const bucket = await createBucket(s3, uniqueName("data"));
  await createAppsTable(dynamo, appsTable);
  server = createServer((req, res) => {
    const [, , appId, , webhookId] = (req.url ?? "").split("/");
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      const list = hooks.get(appId ?? "") ?? [];
      if (req.method === "POST") list.push(JSON.parse(body));
      if (req.method === "PUT")
        list.splice(
          list.findIndex((h) => h.id === webhookId),
          1,
          JSON.parse(body),
        );
      hooks.set(appId ?? "", list);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(req.method === "GET" ? list : {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  managementUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  const credentials = { username: USERNAME, password: "runbook-password" };
  writeStackInfo(dir, {
    pid: process.pid,
    webhookUrl: "http://127.0.0.1:1/webhook",
    healthUrl: "http://127.0.0.1:1/health",
    region: "us-east-1",
    endpoints: { aws: inject("fauxqsEndpoint"), dynamodb: inject("dynamoEndpoint") },
    tables: {} as never,
    appsTable,
    bucket,
    queues: {} as never,
    credentials,
    startedAt: new Date().toISOString(),
  });
  await fileCredentialStore(credentialsFilePath(dir)).write([credentials]);
  // The app connected (its webhook as connect records it), silent for 3 hours after 3 weeks of 120 an hour.
  await dynamoAppRegistry(documentClient(dynamo), appsTable).allow([APP], "test");
  const ledger = blobRollupLedger(s3BlobStore(s3, bucket));
  const lastSeenAt = Date.now() - 3 * 3_600_000;
  for (let d = 0; d <= 22; d++)
    await ledger.record({
      day: utcDay(Date.now() - d * 86_400_000),
      computedAt: Date.now(),
      final: d > 1,
      queries: 0,
      bytesScanned: 0,
      apps: {},
      hourly: { [APP]: Array(24).fill(d === 0 ? 0 : 120) },
      seenAt: { [APP]: lastSeenAt },
    });
  // Its credential refused (a password changed by hand): what the local log tap records.
  appendRefusal(dir, loggedUsername(USERNAME), Date.now() - 60_000);
}, 120_000);

afterAll(() => {
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the watchdog's runbook runs as written (#58)", () => {
  it("runs every command of the SilentApps and RefusedDeliveries descriptions against the local stack; a finding exits 1, with and without --json", async () => {
    const env = {
      PLATFORM_MANAGEMENT_URL: managementUrl,
      PLATFORM_MANAGEMENT_KEY: "k",
      PLATFORM_MANAGEMENT_SECRET: "s",
    };
    const commands = runbookCommands();
    expect(commands).toEqual(
      expect.arrayContaining([
        "npx webhook apps --silent --stack <stack>",
        "npx webhook apps --check --stack <stack>",
        "npx webhook apps --refused --stack <stack>",
        "npx webhook connect --stack <stack> --app <appId>",
      ]),
    );
    // connect first (the app's webhook on the platform, recorded in the apps table), then the rest in order.
    const ordered = [
      ...commands.filter((c) => c.includes(" connect ")),
      ...commands.filter((c) => !c.includes(" connect ")),
    ];
    const outputs = new Map<string, { code: number | null; stdout: string; stderr: string }>();
    for (const command of ordered) {
      const args = command
        .replace(/^npx webhook /, "")
        .replace("--stack <stack>", `--state-dir ${dir}`)
        .replace("<appId>", APP)
        .split(" ");
      const run = await webhookCli(args, env);
      outputs.set(command, run);
      expect(run.code, `${command}: ${run.stderr}`).not.toBe(2);
    }
    expect(outputs.get("npx webhook connect --stack <stack> --app <appId>")?.code).toBe(0);
    const silent = outputs.get("npx webhook apps --silent --stack <stack>");
    expect(silent?.code).toBe(1);
    expect(silent?.stdout).toContain(APP);
    const refused = outputs.get("npx webhook apps --refused --stack <stack>");
    expect(refused?.code).toBe(1);
    expect(refused?.stdout).toContain(`${loggedUsername(USERNAME)}: 1 refused`);
    expect(refused?.stdout).toContain(APP);
    // The webhook as connect set it: nothing wrong on the platform's side.
    expect(outputs.get("npx webhook apps --check --stack <stack>")?.code).toBe(0);

    // Triggers narrowed on the platform: --check finds it; the same exit code with --json.
    const hook = hooks.get(APP)?.[0] as { triggers: string[] };
    hook.triggers = hook.triggers.filter((t) => t === "user_connection_status_changed");
    for (const json of [[], ["--json"]]) {
      const check = await webhookCli(["apps", "--check", "--state-dir", dir, ...json], env);
      expect(check.code, check.stderr).toBe(1);
      expect(check.stdout).toContain("triggers-narrowed");
      const silentJson = await webhookCli(["apps", "--silent", "--state-dir", dir, ...json]);
      expect(silentJson.code).toBe(1);
    }
  }, 240_000);
});
