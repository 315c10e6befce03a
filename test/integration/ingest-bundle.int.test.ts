import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { bundleFunction, FUNCTION_ENTRIES } from "../../infra/bundling";
import type { OversizePointer } from "../../shared/contracts/queue-messages";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../tools/local/emulators";
import { createBucket, createQueue, testClients, uniqueName } from "../support/aws";
import { runProcess } from "../support/cli";
import { fixtureText } from "../support/fixtures";
import { basic } from "../support/ingest";

const INVOKE = fileURLToPath(new URL("../support/invoke-bundle.mjs", import.meta.url));

/** An API Gateway HTTP API event for `POST /webhook` with the given body. */
function httpApiEvent(body: string): APIGatewayProxyEventV2 {
  return {
    version: "2.0",
    routeKey: "POST /webhook",
    rawPath: "/webhook",
    rawQueryString: "",
    headers: { authorization: basic("platform", "s3cret"), "content-type": "application/json" },
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: "000000000000",
      apiId: "api",
      domainName: "example.com",
      domainPrefix: "example",
      http: {
        method: "POST",
        path: "/webhook",
        protocol: "HTTP/1.1",
        sourceIp: "192.0.2.1",
        userAgent: "test",
      },
      requestId: "request",
      routeKey: "POST /webhook",
      stage: "$default",
      time: "14/Nov/2023:22:13:20 +0000",
      timeEpoch: 1_700_000_000_123,
    },
  };
}

// The ingest as the stack bundles it (bundleFunction), run in a fresh Node process against
// fauxqs: the S3 client is in a bundle of its own (oversize-store.lazy.mjs), loaded by the
// first request that needs it, and that request's body still lands in S3.
describe("the bundled ingest, with its S3 client loaded on first use", () => {
  const { sqs, s3 } = testClients();
  let dir: string;
  let handlerFile: string;
  let queueUrl: string;
  let bucket: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ingest-bundle-"));
    handlerFile = bundleFunction(FUNCTION_ENTRIES.ingest, join(dir, "bundle"), {
      sourceMaps: false,
    }).handlerFile;
    queueUrl = await createQueue(sqs, uniqueName("events"));
    bucket = await createBucket(s3, uniqueName("data"));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Each event's answer and the bundle's files loaded once it was handled, in one fresh process. */
  async function invoke(
    events: APIGatewayProxyEventV2[],
  ): Promise<Array<{ response: { statusCode: number }; loaded: string[] }>> {
    const eventsFile = join(dir, "events.json");
    writeFileSync(eventsFile, JSON.stringify(events));
    const run = await runProcess(process.execPath, [INVOKE, handlerFile, eventsFile], {
      env: {
        PATH: process.env.PATH ?? "",
        AWS_REGION: LOCAL_REGION,
        AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
        LOCAL_AWS_ENDPOINT: inject("fauxqsEndpoint"),
        EVENTS_QUEUE_URL: queueUrl,
        DATA_BUCKET: bucket,
        WEBHOOK_USERNAME: "platform",
        WEBHOOK_PASSWORD: "s3cret",
      },
    });
    if (run.status !== 0) throw new Error(`the bundle exited ${run.status}: ${run.stderr}`);
    // The handler's own log and metric lines are on stdout too.
    return run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((line) => "response" in line);
  }

  it("loads no S3 code for an inline body, then loads it and stores an oversize body in S3", async () => {
    // Prepare: a body SQS takes inline, then one over its limit.
    const small = fixtureText("group_created");
    const big = JSON.stringify({
      trigger: "message_sent",
      appId: "app1",
      data: { text: "x".repeat(1_100_000) },
    });

    // Act
    const [inline, oversize] = await invoke([httpApiEvent(small), httpApiEvent(big)]);

    // Assess: the S3 client's chunk is loaded by the oversize request only, which answers 200 once
    // the body is in S3 and a pointer in SQS.
    const s3Chunk = (loaded: string[]) => loaded.some((url) => url.endsWith("/oversize-store.lazy.mjs"));
    expect(inline?.response.statusCode).toBe(200);
    expect(s3Chunk(inline?.loaded ?? [])).toBe(false);
    expect(oversize?.response.statusCode).toBe(200);
    expect(s3Chunk(oversize?.loaded ?? [])).toBe(true);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MessageAttributeNames: ["All"],
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
      }),
    );
    const inSqs = Messages.filter((m) => m.MessageAttributes?.bodyLocation === undefined);
    const pointers = Messages.filter((m) => m.MessageAttributes?.bodyLocation?.StringValue === "s3");
    expect(inSqs.map((m) => m.Body)).toEqual([small]);
    expect(pointers).toHaveLength(1);
    const pointer = JSON.parse(pointers[0]?.Body ?? "{}") as OversizePointer;
    expect(pointer.bucket).toBe(bucket);
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: pointer.key }));
    expect(await object.Body?.transformToString("utf8")).toBe(big);
  });
});
