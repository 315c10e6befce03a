import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { cachedAllowlist } from "../../shared/apps/allowlist";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { fromHttpApiEvent, ingestWebhook, jsonDepthExceeds } from "../../shared/ingest/core";
import type { CredentialSource } from "../../shared/ingest/credential-source";
import { credentialForApp } from "../../shared/ingest/credentials";
import { NO_APP_MESSAGE_GROUP } from "../../shared/platform/constants";
import { loggedUsername } from "../../shared/platform/log-safe";
import { fixtureText } from "../support/fixtures";
import { basic, ingestDeps, RECEIVED_AT, request } from "../support/ingest";

const fixture = fixtureText("group_created");
const sha256 = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");

describe("authentication", () => {
  const cases: Array<[string, string | undefined, string]> = [
    ["no header", undefined, "missing"],
    ["empty header", "", "missing"],
    ["Bearer scheme", "Bearer abc", "malformed"],
    ["Digest scheme", 'Digest username="platform"', "malformed"],
    ["bad base64", "Basic !!!notbase64!!!", "malformed"],
    ["base64 with wrong padding", "Basic cGxhdGZvcm06czNjcmV0=", "malformed"],
    ["no colon", `Basic ${Buffer.from("platforms3cret").toString("base64")}`, "malformed"],
    ["a 1 MB header", `Basic ${"A".repeat(1_048_576)}`, "malformed"],
    ["wrong password", basic("platform", "wrong"), "invalid"],
    ["wrong username", basic("platfor", "s3cret"), "invalid"],
    ["password of another length", basic("platform", "s3cret-and-much-longer"), "invalid"],
    ["empty pair", basic("", ""), "invalid"],
    ["password with an extra colon part", basic("platform", "s3cret:x"), "invalid"],
  ];
  it.each(cases)("%s: 401 with WWW-Authenticate, nothing enqueued", async (_name, header, reason) => {
    // Prepare
    const { deps, queue } = ingestDeps();
    // Act
    const result = await ingestWebhook(
      request({ headers: header === undefined ? {} : { authorization: header } }),
      deps,
    );
    // Assess
    expect(result.response.statusCode).toBe(401);
    expect(result.response.headers["www-authenticate"]).toBe('Basic realm="webhooks", charset="UTF-8"');
    expect(JSON.parse(result.response.body)).toMatchObject({ error: "unauthorized" });
    expect(result.detail).toBe(reason);
    expect(queue.sent).toHaveLength(0);
  });

  it("names the username a refused delivery presented as the logs keep it (a prefix and a hash, #58), never its password (#52: refusals by app)", async () => {
    const { deps } = ingestDeps();
    const refused = await ingestWebhook(
      request({ headers: { authorization: basic("old-user", "pw9") } }),
      deps,
    );
    expect(refused.response.statusCode).toBe(401);
    expect(refused.username).toBe(loggedUsername("old-user"));
    expect(refused.usernameKnown).toBe(false);
    expect(JSON.stringify(refused)).not.toContain("pw9");
    // A header that is missing or malformed presents no username.
    expect((await ingestWebhook(request({ headers: {} }), deps)).username).toBeUndefined();
  });

  it("does not parse the body of an unauthenticated request", async () => {
    const { deps } = ingestDeps();
    const result = await ingestWebhook(request({ headers: {}, body: "not json" }), deps);
    expect(result.response.statusCode).toBe(401);
  });

  it("accepts the scheme name in any case", async () => {
    const { deps } = ingestDeps();
    const header = basic("platform", "s3cret").replace("Basic", "bAsIc");
    expect(
      (await ingestWebhook(request({ headers: { authorization: header } }), deps)).response.statusCode,
    ).toBe(200);
  });

  it("accepts both pairs during a rotation and refuses a third", async () => {
    const credentials: WebhookCredential[] = [
      { username: "old", password: "oldpass1" },
      { username: "new", password: "newpass2" },
    ];
    const { deps } = ingestDeps({
      credentials: { get: async () => credentials, refresh: async () => undefined },
    });
    for (const [u, p, status] of [
      ["old", "oldpass1", 200],
      ["new", "newpass2", 200],
      ["old", "newpass2", 401],
      ["third", "thirdpass", 401],
    ] as const) {
      const result = await ingestWebhook(request({ headers: { authorization: basic(u, p) } }), deps);
      expect(result.response.statusCode, `${u}:${p}`).toBe(status);
    }
  });

  it("re-reads the credential store on a miss, so a freshly rotated secret works at once", async () => {
    let stored: WebhookCredential[] = [{ username: "old", password: "oldpass1" }];
    let refreshes = 0;
    const source: CredentialSource = {
      get: async () => [{ username: "old", password: "oldpass1" }], // stale cache
      refresh: async () => {
        refreshes++;
        return stored;
      },
    };
    stored = [{ username: "new", password: "newpass2" }];
    const { deps } = ingestDeps({ credentials: source });
    const result = await ingestWebhook(
      request({ headers: { authorization: basic("new", "newpass2") } }),
      deps,
    );
    expect(result.response.statusCode).toBe(200);
    expect(refreshes).toBe(1);
  });

  it("limits a pair to its appIds: 403 for another app, nothing enqueued", async () => {
    const credentials = [{ username: "platform", password: "s3cret", appIds: ["app1"] }];
    const { deps, queue } = ingestDeps({
      credentials: { get: async () => credentials, refresh: async () => undefined },
    });
    const allowed = await ingestWebhook(request(), deps);
    const other = await ingestWebhook(
      request({ body: JSON.stringify({ trigger: "x", appId: "app2" }) }),
      deps,
    );
    const none = await ingestWebhook(request({ body: JSON.stringify({ trigger: "x" }) }), deps);
    expect(allowed.response.statusCode).toBe(200);
    expect(other.response.statusCode).toBe(403);
    expect(JSON.parse(other.response.body)).toMatchObject({ error: "forbidden-app" });
    expect(none.response.statusCode).toBe(403);
    expect(queue.sent).toHaveLength(1);
  });
});

describe("deployment app allowlist", () => {
  const allowlistOf = (apps: string[]) =>
    cachedAllowlist(async (appId) => apps.includes(appId), { allowedTtlMs: 60_000, refusedTtlMs: 5_000 });

  it("refuses other apps with 403 whatever the credentials", async () => {
    const { deps, queue } = ingestDeps({ allowedApps: allowlistOf(["app1"]) });
    expect((await ingestWebhook(request(), deps)).response.statusCode).toBe(200);
    const other = await ingestWebhook(request({ body: '{"trigger":"x","appId":"app9"}' }), deps);
    expect(other.response.statusCode).toBe(403);
    expect(queue.sent).toHaveLength(1);
  });

  it("answers 503 (the platform retries), not 403, when the allowlist cannot be read", async () => {
    // Prepare: a store that fails (the port's fake: the DynamoDB adapter is tested in apps.int)
    const failing = cachedAllowlist(
      async () => {
        throw new Error("throttled");
      },
      { allowedTtlMs: 60_000, refusedTtlMs: 5_000 },
    );
    const { deps, queue } = ingestDeps({ allowedApps: failing });

    // Act
    const result = await ingestWebhook(request(), deps);

    // Assess
    expect(result.response.statusCode).toBe(503);
    expect(result.response.headers?.["retry-after"]).toBe("10");
    expect(queue.sent).toHaveLength(0);
  });
});

describe("method", () => {
  it("refuses a text body holding a lone surrogate (bytes that were not UTF-8), storing nothing", async () => {
    const { deps, queue } = ingestDeps();
    const body = '{"trigger":"group_created","appId":"app1","data":{"x":"\ud800"}}';
    const result = await ingestWebhook(request({ body }), deps);
    expect([result.response.statusCode, result.detail]).toEqual([400, "not-utf8"]);
    expect(queue.sent).toEqual([]);
  });

  it.each(["GET", "PUT", "DELETE", "PATCH"])("%s gets 405 with Allow: POST", async (method) => {
    const { deps, queue } = ingestDeps();
    const result = await ingestWebhook(request({ method }), deps);
    expect(result.response.statusCode).toBe(405);
    expect(result.response.headers.allow).toBe("POST");
    expect(queue.sent).toHaveLength(0);
  });
});

describe("body", () => {
  const bad: Array<[string, string, string]> = [
    ["empty", "", "empty"],
    ["not JSON", "trigger=group_created", "not-json"],
    ["a JSON array", "[1,2]", "not-object"],
    ["JSON null", "null", "not-object"],
    ["a JSON string", '"group_created"', "not-object"],
    ["no trigger", '{"appId":"app1","data":{}}', "no-trigger"],
    ["trigger not a string", '{"trigger":42}', "bad-trigger"],
    ["trigger empty", '{"trigger":""}', "bad-trigger"],
    ["trigger with spaces", '{"trigger":"group created"}', "bad-trigger"],
    ["appId not a string", '{"trigger":"x","appId":7}', "bad-app-id"],
    ["deeply nested", `{"trigger":"x","data":${"[".repeat(10_000)}${"]".repeat(10_000)}}`, "too-deep"],
  ];
  it.each(bad)("%s: 400 with a JSON error naming the problem", async (_name, body, detail) => {
    const { deps, queue } = ingestDeps();
    const result = await ingestWebhook(request({ body }), deps);
    expect(result.response.statusCode).toBe(400);
    expect(result.detail).toBe(detail);
    const payload = JSON.parse(result.response.body);
    expect(payload.error).toBe("invalid-body");
    expect(payload.message).toMatch(/\S/);
    expect(queue.sent).toHaveLength(0);
  });

  it("refuses invalid UTF-8 (base64-delivered bytes)", async () => {
    const { deps } = ingestDeps();
    const bytes = Buffer.concat([
      Buffer.from('{"trigger":"x","v":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const result = await ingestWebhook(
      request({ body: bytes.toString("base64"), isBase64Encoded: true }),
      deps,
    );
    expect(result.response.statusCode).toBe(400);
    expect(result.detail).toBe("not-utf8");
  });

  it("accepts an unknown trigger", async () => {
    const { deps, queue } = ingestDeps();
    const result = await ingestWebhook(
      request({ body: '{"trigger":"after_feed_item_read","appId":"a"}' }),
      deps,
    );
    expect(result.response.statusCode).toBe(200);
    expect(queue.sent[0]?.attributes.trigger).toBe("after_feed_item_read");
  });

  it("enqueues the raw body byte-for-byte with its attributes and answers with the eventId", async () => {
    const { deps, queue } = ingestDeps();
    const result = await ingestWebhook(request({ body: fixture }), deps);
    const eventId = sha256(fixture);
    expect(result.response.statusCode).toBe(200);
    expect(result.response.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(result.response.body)).toEqual({ status: "accepted", eventId });
    expect(queue.sent).toEqual([
      {
        body: fixture,
        attributes: { trigger: "group_created", appId: "2598234fa1e3b9c", receivedAt: RECEIVED_AT, eventId },
        groupId: "2598234fa1e3b9c",
      },
    ]);
  });

  it("sends each event in its app's message group, and an event without an app in the no-app group", async () => {
    const { deps, queue } = ingestDeps();
    await ingestWebhook(request({ body: '{"trigger":"group_created","appId":"tenant-7/eu"}' }), deps);
    await ingestWebhook(request({ body: '{"trigger":"group_created"}' }), deps);
    expect(queue.sent.map((m) => m.groupId)).toEqual(["tenant-7/eu", NO_APP_MESSAGE_GROUP]);
  });

  it("decodes a base64 body before hashing and enqueueing it", async () => {
    const { deps, queue } = ingestDeps();
    const result = await ingestWebhook(
      request({ body: Buffer.from(fixture).toString("base64"), isBase64Encoded: true }),
      deps,
    );
    expect(result.response.statusCode).toBe(200);
    expect(queue.sent[0]?.body).toBe(fixture);
    expect(result.eventId).toBe(sha256(fixture));
  });

  it("stores a 5 MB body in S3 and enqueues a pointer to it", async () => {
    const { deps, queue, oversizeStore } = ingestDeps();
    const body = JSON.stringify({
      trigger: "message_sent",
      appId: "app1",
      data: { text: "x".repeat(5_000_000) },
    });
    const result = await ingestWebhook(request({ body }), deps);
    expect(result.response.statusCode).toBe(200);
    expect(result.outcome).toBe("accepted-oversize");
    const pointer = JSON.parse(queue.sent[0]?.body ?? "{}");
    expect(queue.sent[0]?.attributes.bodyLocation).toBe("s3");
    expect(queue.sent[0]?.groupId).toBe("app1");
    expect(pointer).toMatchObject({
      bucket: "test-bucket",
      size: Buffer.byteLength(body),
      eventId: sha256(body),
    });
    expect(pointer.key).toBe(`oversize/app1/2023/11/14/${sha256(body)}.json`);
    expect(Buffer.from(oversizeStore.objects.get(pointer.key) ?? []).toString()).toBe(body);
  });

  it("stores a body with characters SQS refuses in S3, keeping it byte-exact", async () => {
    const { deps, queue, oversizeStore } = ingestDeps();
    const body = '{"trigger":"message_sent","appId":"app1","text":"\uFFFF"}';
    const result = await ingestWebhook(request({ body }), deps);
    expect(result.outcome).toBe("accepted-oversize");
    const pointer = JSON.parse(queue.sent[0]?.body ?? "{}");
    expect(Buffer.from(oversizeStore.objects.get(pointer.key) ?? []).toString()).toBe(body);
  });

  it("falls back to S3 when SQS refuses the body's characters", async () => {
    const { deps, oversizeStore } = ingestDeps();
    const sent: unknown[] = [];
    deps.queue = {
      send: async (m) => {
        if (!m.attributes.bodyLocation)
          throw Object.assign(new Error("Invalid characters found"), {
            name: "AWS.SimpleQueueService.InvalidMessageContents",
          });
        sent.push(m);
      },
    };
    const body = '{"trigger":"message_reaction_added","appId":"app1","reaction":"🎉"}';
    const result = await ingestWebhook(request({ body }), deps);
    expect(result.response.statusCode).toBe(200);
    expect(result.outcome).toBe("accepted-oversize");
    expect(sent).toHaveLength(1);
    expect([...oversizeStore.objects.values()].map((b) => Buffer.from(b).toString())).toEqual([body]);
  });

  it("answers 413 above the hard cap, before decoding", async () => {
    const { deps, queue } = ingestDeps({
      limits: { maxBodyBytes: 1000, inlineBodyLimitBytes: 500, maxJsonDepth: 64 },
    });
    const result = await ingestWebhook(request({ body: `{"trigger":"x","p":"${"y".repeat(2000)}"}` }), deps);
    expect(result.response.statusCode).toBe(413);
    expect(JSON.parse(result.response.body).error).toBe("payload-too-large");
    expect(queue.sent).toHaveLength(0);
  });

  it("answers 503, never 200, when the queue refuses the message", async () => {
    const { deps } = ingestDeps({
      queue: {
        send: async () => {
          throw new Error("connection reset");
        },
      },
    });
    const result = await ingestWebhook(request(), deps);
    expect(result.response.statusCode).toBe(503);
    expect(result.outcome).toBe("enqueue-failed");
    expect(JSON.parse(result.response.body).error).toBe("enqueue-failed");
    expect(result.eventId).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("jsonDepthExceeds", () => {
  it("counts nesting of objects and arrays, not of string contents", () => {
    expect(jsonDepthExceeds(JSON.parse('{"a":"[[[[[[\\"[[[["}'), 2)).toBe(false);
    expect(jsonDepthExceeds({ a: [1] }, 2)).toBe(false);
    expect(jsonDepthExceeds({ a: [[1]] }, 2)).toBe(true);
    expect(jsonDepthExceeds([{}, [{ b: {} }]], 3)).toBe(true);
  });
});

describe("fromHttpApiEvent", () => {
  it("takes method, headers, body and API Gateway's request time", () => {
    const event = {
      version: "2.0",
      routeKey: "POST /webhook",
      rawPath: "/webhook",
      rawQueryString: "",
      headers: { authorization: "Basic x" },
      body: "{}",
      isBase64Encoded: false,
      requestContext: { http: { method: "POST" }, timeEpoch: RECEIVED_AT },
    } as unknown as Parameters<typeof fromHttpApiEvent>[0];
    expect(fromHttpApiEvent(event)).toEqual({
      method: "POST",
      headers: { authorization: "Basic x" },
      body: "{}",
      isBase64Encoded: false,
      receivedAt: RECEIVED_AT,
    });
  });
});

describe("the credential an app's webhook is given (connect)", () => {
  const any = { username: "any", password: "p-any" };
  const app1 = { username: "app1-pair", password: "p-1", appIds: ["app1"] };
  const app2 = { username: "app2-pair", password: "p-2", appIds: ["app2"] };

  it("is the app's own pair where the store has one per app, else the one any app may use; never another app's", () => {
    const store = [app1, any, app2];
    expect(credentialForApp(store, "app1")).toEqual(app1);
    expect(credentialForApp(store, "app2")).toEqual(app2);
    expect(credentialForApp(store, "app3")).toEqual(any);
    expect(credentialForApp([app1, app2], "app3")).toBeUndefined();
  });

  it("is the new credential of a rotation under way, never the one it replaces", () => {
    const next = { username: "app1-new", password: "p-1-new", appIds: ["app1"], replaces: "app1-pair" };
    expect(credentialForApp([app1, any, next], "app1")).toEqual(next);
    expect(credentialForApp([next, app1], "app1")).toEqual(next);
  });
});
