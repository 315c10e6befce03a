import { createHash } from "node:crypto";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromHttpApiEvent, ingestWebhook } from "../../shared/ingest/core";
import { startGateway } from "../../tools/local/http-gateway";
import { fixtureText } from "../support/fixtures";
import { basic, ingestDeps, rawRequest } from "../support/ingest";

// The local API Gateway stand-in in front of the real ingest core (in-memory queue and store).
const { deps, queue } = ingestDeps();
let server: http.Server;
let port = 0;

beforeAll(async () => {
  const started = await startGateway({
    port: 0,
    host: "127.0.0.1",
    ingest: (event) => ingestWebhook(fromHttpApiEvent(event), deps).then((r) => r.response),
    isReady: () => true,
  });
  server = started.server;
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A raw request: the path and the bytes go out exactly as given (no client-side normalisation). */
function send(method: string, path: string, body: Buffer, contentType = "application/json") {
  return rawRequest(port, method, path, body, {
    authorization: basic("platform", "s3cret"),
    "content-type": contentType,
  });
}

const valid = Buffer.from(fixtureText("group_created"));
/** A valid payload with bytes that are not UTF-8 inside a string value. */
const withBytes = (bytes: number[]) =>
  Buffer.concat([
    Buffer.from('{"trigger":"group_created","appId":"app1","data":{"x":"'),
    Buffer.from(bytes),
    Buffer.from('"}}'),
  ]);

describe("the local API Gateway stand-in", () => {
  it("hands the ingest the bytes as sent: the eventId is the SHA-256 of the body", async () => {
    const before = queue.sent.length;
    const { status, json } = await send("POST", "/webhook", valid);
    expect(status).toBe(200);
    expect(json.eventId).toBe(createHash("sha256").update(valid).digest("hex"));
    expect(queue.sent.slice(before).map((m) => m.body)).toEqual([valid.toString("utf8")]);
  });

  it.each([
    ["\\xff\\xfe", [0xff, 0xfe]],
    ["a CESU-8 lone surrogate", [0xed, 0xa0, 0x80]],
    ["a truncated sequence", [0xe2, 0x82]],
  ])("refuses a body with %s (400, nothing stored), whatever the content type says", async (_name, bytes) => {
    const before = queue.sent.length;
    for (const type of ["application/json", "text/plain; charset=utf-8", "application/octet-stream"]) {
      const { status, json } = await send("POST", "/webhook", withBytes(bytes), type);
      expect([status, json.error]).toEqual([400, "invalid-body"]);
    }
    expect(queue.sent.length).toBe(before);
  });

  it("stamps every delivery with its own receipt time, in the order they arrive, even within one millisecond", async () => {
    const before = queue.sent.length;
    const bodies = Array.from({ length: 40 }, (_, i) =>
      Buffer.from(fixtureText("group_member_joined").replace("cometchat-uid-2", `burst-${i}`)),
    );
    const answers = await Promise.all(bodies.map((body) => send("POST", "/webhook", body)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const stamps = queue.sent.slice(before).map((m) => Number(m.attributes?.receivedAt));
    expect(new Set(stamps).size).toBe(bodies.length);
    // Enqueued in the order the ingest finished, stamped in the order the requests arrived: each
    // stamp is distinct, and none is more than a few ms ahead of the clock.
    expect(Math.max(...stamps)).toBeLessThanOrEqual(Date.now() + bodies.length);
  });

  it.each([
    ["POST", "/%2e%2e/webhook"],
    ["POST", "/./webhook"],
    ["POST", "/x/../webhook"],
    ["POST", "/WEBHOOK"],
    ["GET", "/webhook"],
  ])("matches routes as API Gateway does: %s %s is a 404", async (method, path) => {
    const before = queue.sent.length;
    const { status, json } = await send(method, path, valid);
    expect([status, json]).toEqual([404, { message: "Not Found" }]);
    expect(queue.sent.length).toBe(before);
  });
});
