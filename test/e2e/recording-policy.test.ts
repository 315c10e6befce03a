import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { freePort } from "../../tools/local/emulators";
import { type LocalStack, startLocalStack } from "../../tools/local/stack";
import { analyticsQueries } from "../../tools/query/queries";
import { waitForDrain } from "../../tools/simulate/run";
import { fixture } from "../support/fixtures";
import { postWebhook } from "../support/ingest";

// A stack of its own (vitest runs each file in its own process; the handlers read their
// configuration once): the local stack with the recording policy AWS runs.
let stack: LocalStack;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "recording-policy-"));
  stack = await startLocalStack({
    port: await freePort(),
    stateDir: dir,
    inMemory: true,
    logMode: "silent",
    recordingPolicy: "deployed",
  });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
});

describe("the local stack with the deployed recording policy", () => {
  it.each([
    ["http://127.0.0.1:9/r.mp4", "refused-scheme"],
    ["https://127.0.0.1/r.mp4", "refused-address"],
    ["https://[::a9fe:a9fe]/latest/meta-data/", "refused-address"],
    ["https://10.0.0.5/r.mp4", "refused-address"],
  ])("refuses %s end to end (%s, final), as in AWS", async (url, reason) => {
    // Prepare
    const event = fixture("recording_generated");
    event.appId = "policy-app";
    event.data.sessionId = `s-${reason}-${url.length}`;
    event.data.recording_url = url;

    // Act
    const response = await postWebhook(stack.info, JSON.stringify(event));
    await waitForDrain(stack.info, 120);

    // Assess
    expect(response.status).toBe(200);
    const session = await analyticsQueries(documentClient(stack.clients.dynamo), stack.info.tables).session(
      "policy-app",
      event.data.sessionId,
    );
    expect(session?.recordings[event.data.startTime]).toMatchObject({
      status: "failed",
      failureReason: reason,
    });
  });
});
