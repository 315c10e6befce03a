import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { bundleFunction, FUNCTION_ENTRIES, SQL_DIR } from "../../infra/bundling";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../tools/local/emulators";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { INSTALL_TIMEOUT_MS, runtimeClientEntry } from "../support/runtime-client";

/**
 * Each function's bundle as Lambda's Node images load it: started by `aws-lambda-ric` (the
 * runtime interface client those images run, pinned at 4.0.2; installed on first use into
 * node_modules/.cache, as its add-on builds from source: see support/runtime-client.ts), against a
 * small local Runtime API, and invoked once with a probe event. It must load (no init error),
 * answer, and write its log lines.
 */

const REQUEST_ID = "8f5e0a4c-probe";

/** What the runtime client told the Runtime API during one invocation. */
interface Invocation {
  path: string;
  body: unknown;
}

/**
 * A Runtime API of one invocation: `next` gives the probe event once (and then never answers, as
 * Lambda freezes an idle runtime); the answer, an invocation error or an init error is reported.
 */
async function runtimeApi(event: unknown) {
  let served = false;
  let report: (answer: Invocation) => void = () => {};
  const answered = new Promise<Invocation>((resolve) => {
    report = resolve;
  });
  let askedAgain: () => void = () => {};
  const idle = new Promise<void>((resolve) => {
    askedAgain = resolve;
  });
  const read = async (req: IncomingMessage) => {
    let text = "";
    for await (const chunk of req) text += chunk;
    return text ? JSON.parse(text) : null;
  };
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? "";
    if (req.method === "GET" && path === "/2018-06-01/runtime/invocation/next") {
      // Asked again: the invocation is over (its lines written). Held open, as Lambda freezes an idle runtime.
      if (served) return askedAgain();
      served = true;
      res.writeHead(200, {
        "content-type": "application/json",
        "lambda-runtime-aws-request-id": REQUEST_ID,
        "lambda-runtime-deadline-ms": String(Date.now() + 30_000),
        "lambda-runtime-invoked-function-arn": "arn:aws:lambda:us-east-1:000000000000:function:probe",
        "lambda-runtime-trace-id": "Root=1-00000000-000000000000000000000000;Sampled=0",
      });
      res.end(JSON.stringify(event));
      return;
    }
    const body = await read(req);
    res.writeHead(202).end();
    report({ path, body });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    answered,
    /** The runtime asked for the next event: the first one is done. */
    idle,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Starts the bundle in `taskRoot` under the runtime client; resolves with its answer and its output lines. */
async function invokeUnderRic(ric: string, taskRoot: string, env: Record<string, string>, event: unknown) {
  const api = await runtimeApi(event);
  let stdout = "";
  let stderr = "";
  const child: ChildProcess = spawn(process.execPath, [ric], {
    cwd: taskRoot,
    env: {
      PATH: process.env.PATH ?? "",
      AWS_LAMBDA_RUNTIME_API: api.address,
      LAMBDA_TASK_ROOT: taskRoot,
      _HANDLER: "index.handler",
      AWS_LAMBDA_FUNCTION_NAME: "probe",
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: "256",
      AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
      AWS_LAMBDA_LOG_GROUP_NAME: "/aws/lambda/probe",
      AWS_LAMBDA_LOG_STREAM_NAME: "2026/01/01/[$LATEST]probe",
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      POWERTOOLS_LOG_LEVEL: "DEBUG",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
  const early = closed.then((code) => {
    throw new Error(`exited with ${code} before answering: ${stderr.slice(-2000)}`);
  });
  try {
    const answer = await Promise.race([api.answered, early]);
    await Promise.race([api.idle, early]);
    // Stopped once it waits for the next event; its output is complete once its pipes close.
    child.kill();
    await closed;
    // Lambda sends both streams to the function's log (Powertools writes ERROR lines to stderr).
    return { answer, lines: `${stdout}\n${stderr}`.split("\n").filter(Boolean) };
  } finally {
    child.kill();
    await api.close();
  }
}

/** The JSON lines of a function's output (its Logger's and its metrics'), parsed. */
const jsonLines = (lines: string[]) =>
  lines.flatMap((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return value && typeof value === "object" ? [value as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });

const emptySqsBatch = { Records: [] };

describe("the bundles under aws-lambda-ric (Lambda's Node runtime interface client)", () => {
  let dir: string;
  let bucket: string;
  let ric: string;
  const endpoint = inject("fauxqsEndpoint");
  const local = { LOCAL_AWS_ENDPOINT: endpoint };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ric-"));
    bucket = await createBucket(testClients().s3, uniqueName("ric"));
    // Its first install builds the add-on (a minute or two on a busy machine); then it is cached.
    ric = await runtimeClientEntry();
  }, INSTALL_TIMEOUT_MS + 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<{
    name: keyof typeof FUNCTION_ENTRIES;
    env: () => Record<string, string>;
    event: unknown;
    answer: unknown;
    /** The handler's own error, when the probe makes it fail (posted to the invocation's /error). */
    fails?: RegExp;
    logs: (lines: Array<Record<string, unknown>>) => void;
  }> = [
    {
      name: "ingest",
      env: () => ({
        ...local,
        EVENTS_QUEUE_URL: `${endpoint}/000000000000/none`,
        DATA_BUCKET: bucket,
        WEBHOOK_USERNAME: "platform",
        WEBHOOK_PASSWORD: "s3cret",
      }),
      // No Authorization header: refused before anything is enqueued.
      event: {
        version: "2.0",
        routeKey: "POST /webhook",
        rawPath: "/webhook",
        headers: {},
        body: "{}",
        isBase64Encoded: false,
        requestContext: { http: { method: "POST", path: "/webhook" }, timeEpoch: 1_700_000_000_000 },
      },
      answer: expect.objectContaining({ statusCode: 401 }),
      logs: (lines) => expect(lines.some((l) => "_aws" in l || "level" in l)).toBe(true),
    },
    {
      name: "projector",
      env: () => ({
        ...local,
        GROUPS_TABLE: "g",
        MEMBERSHIPS_TABLE: "m",
        PRESENCE_TABLE: "p",
        SESSIONS_TABLE: "s",
        DATA_BUCKET: bucket,
        RECORDINGS_QUEUE_URL: `${endpoint}/000000000000/none`,
      }),
      event: emptySqsBatch,
      answer: { batchItemFailures: [] },
      logs: (lines) =>
        expect(lines).toContainEqual(
          expect.objectContaining({ message: "batch", function_request_id: REQUEST_ID }),
        ),
    },
    {
      name: "recorder",
      env: () => ({ ...local, SESSIONS_TABLE: "s", DATA_BUCKET: bucket }),
      // A job that breaks its contract: acknowledged and logged, nothing fetched.
      event: {
        Records: [
          {
            messageId: "m1",
            receiptHandle: "h",
            body: "not a job",
            attributes: { ApproximateReceiveCount: "1" },
            messageAttributes: {},
            eventSource: "aws:sqs",
            eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:recordings",
            awsRegion: "us-east-1",
          },
        ],
      },
      answer: { batchItemFailures: [] },
      logs: (lines) =>
        expect(lines).toContainEqual(
          expect.objectContaining({ message: "invalid recording job", function_request_id: REQUEST_ID }),
        ),
    },
    {
      name: "reconciler",
      env: () => ({
        ...local,
        PRESENCE_TABLE: "p",
        RECORDING_API_KEYS_SECRET_ID: "arn:aws:secretsmanager:us-east-1:000000000000:secret:none",
        RECONCILE_APPS: "{}",
      }),
      event: { source: "aws.events", "detail-type": "Scheduled Event", detail: {} },
      answer: null,
      // No app to reconcile writes no line (one would call Secrets Manager: no test calls AWS).
      logs: () => {},
    },
    {
      name: "rollup",
      // One pass a day for every app (#31): each tick queries Athena, which no test can reach, so
      // the probe sees the handler's own failure: both days counted failed and logged, then thrown.
      env: () => ({
        ...local,
        ACTIVITY_TABLE: "a",
        DATA_BUCKET: bucket,
        ATHENA_WORKGROUP: "wg",
        GLUE_DATABASE: "db",
        AWS_MAX_ATTEMPTS: "1",
      }),
      event: { source: "aws.events", "detail-type": "Scheduled Event", detail: {} },
      answer: null,
      fails: /day\(s\) could not be recomputed/,
      logs: (lines) =>
        expect(lines).toContainEqual(
          expect.objectContaining({ message: "rollup failed", outcome: "failed" }),
        ),
    },
  ];

  it.each(cases.map((c) => [c.name, c] as const))(
    "%s loads, answers a probe event, and writes the log lines it should",
    async (name, c) => {
      // Prepare: the bundle as the stack builds it (the rollup with its SQL files beside it).
      const taskRoot = join(dir, name);
      bundleFunction(FUNCTION_ENTRIES[name], taskRoot, {
        sourceMaps: name !== "ingest",
        ...(name === "rollup" ? { copy: { from: SQL_DIR, to: "sql" } } : {}),
      });

      // Act
      const { answer, lines } = await invokeUnderRic(ric, taskRoot, c.env(), c.event);

      // Assess: the answer was posted as the invocation's response (not an init error), or as the
      // handler's own error where the probe makes it fail.
      expect(answer.path, JSON.stringify(answer.body)).toBe(
        `/2018-06-01/runtime/invocation/${REQUEST_ID}/${c.fails ? "error" : "response"}`,
      );
      if (c.fails) expect(JSON.stringify(answer.body)).toMatch(c.fails);
      else expect(answer.body).toEqual(c.answer);
      c.logs(jsonLines(lines));
    },
  );
});
