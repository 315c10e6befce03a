import type http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromHttpApiEvent, ingestWebhook } from "../../shared/ingest/core";
import { webhookPath } from "../../shared/platform/webhook-path";
import { startGateway } from "../../tools/local/http-gateway";
import { fixtureText } from "../support/fixtures";
import { basic, ingestDeps, rawRequest } from "../support/ingest";

// The door (#60): the local API Gateway stand-in with a path token, in front of the real ingest
// core (in-memory queue and store), each invocation counted.
const TOKEN = "3f9c0e6a7b8d4c2e1f0a9b8c7d6e5f4a";
const { deps, queue } = ingestDeps();
let invocations = 0;
let server: http.Server;
let port = 0;

beforeAll(async () => {
  const started = await startGateway({
    port: 0,
    host: "127.0.0.1",
    ingest: (event) => {
      invocations++;
      return ingestWebhook(fromHttpApiEvent(event), deps).then((r) => r.response);
    },
    isReady: () => true,
    pathToken: TOKEN,
  });
  server = started.server;
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A delivery with the right credentials to `path`, as sent. */
function deliver(method: string, path: string, authorization = basic("platform", "s3cret")) {
  return rawRequest(port, method, path, Buffer.from(fixtureText("group_created")), {
    authorization,
    "content-type": "application/json",
  });
}

describe("the local gateway with a path token (#60)", () => {
  it("accepts a delivery at /webhook/<token>", async () => {
    const before = { invocations, sent: queue.sent.length };
    const answer = await deliver("POST", webhookPath(TOKEN));
    expect(answer.status).toBe(200);
    expect({ invocations: invocations - before.invocations, sent: queue.sent.length - before.sent }).toEqual({
      invocations: 1,
      sent: 1,
    });
  });

  it.each([
    ["POST", "/webhook"],
    ["POST", "/webhook/0000000000000000000000000000000000"],
    ["POST", `/webhook/${TOKEN}/`],
    ["POST", `/webhook/${TOKEN.toUpperCase()}`],
    ["GET", webhookPath(TOKEN)],
  ])("answers %s %s with API Gateway's 404, and invokes nothing", async (method, path) => {
    const before = invocations;
    const answer = await deliver(method, path);
    expect(answer).toEqual({ status: 404, json: { message: "Not Found" } });
    expect(invocations).toBe(before);
  });

  it("refuses a stranger at the right path with a 401 from the ingest (the path is not the credential)", async () => {
    const answer = await deliver("POST", webhookPath(TOKEN), basic("stranger", "guess"));
    expect(answer.status).toBe(401);
  });
});
