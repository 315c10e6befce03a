import { beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { cachedAllowlist } from "../../shared/apps/allowlist";
import { dynamoAllowedAppLookup } from "../../shared/apps/dynamo-allowlist";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { ingestWebhook } from "../../shared/ingest/core";
import { createAppsTable } from "../../tools/local/provision";
import { testClients, uniqueName } from "../support/aws";
import { ingestDeps, request } from "../support/ingest";

const { dynamo } = testClients();
const APPS = 10_000;
const ids = Array.from(
  { length: APPS },
  (_, i) => `tenant-${String(i).padStart(5, "0")}-${"x".repeat(i % 40)}`,
);
let tableName = "";

/** Counts the GetItem calls the client sends (a middleware on the real client, no mock). */
function countGetItems() {
  const counter = { n: 0 };
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === "GetItemCommand") counter.n++;
      return next(args);
    },
    { step: "initialize", name: `countGetItems-${uniqueName("c")}` },
  );
  return counter;
}

beforeAll(async () => {
  tableName = uniqueName("apps");
  await createAppsTable(dynamo, tableName);
  await dynamoAppRegistry(documentClient(dynamo), tableName).allow(ids, "test");
}, 120_000);

describe("the apps table at 10,000 apps (DynamoDB Local)", () => {
  it("lists every app the registry allowed, and allows again without duplicates", async () => {
    const registry = dynamoAppRegistry(documentClient(dynamo), tableName);
    await registry.allow(ids.slice(0, 100), "test again");
    const known = await registry.list();
    expect(known.size).toBe(APPS);
    expect([...known.values()].every((app) => app.allowed)).toBe(true);
  });

  it("lets every app's deliveries in through the ingest, reading each app once, and refuses others", async () => {
    // Prepare
    const reads = countGetItems();
    const allowedApps = cachedAllowlist(dynamoAllowedAppLookup(dynamo, tableName), {
      allowedTtlMs: 60_000,
      refusedTtlMs: 5_000,
    });
    const { deps, queue } = ingestDeps({ allowedApps });
    const deliver = (appId: string, n: number) =>
      ingestWebhook(request({ body: JSON.stringify({ trigger: "message_sent", appId, data: { n } }) }), deps);

    // Act: two deliveries per app, then an app nobody allowed
    const statuses = new Map<number, number>();
    for (let n = 0; n < 2; n++)
      for (let i = 0; i < APPS; i += 50) {
        const answers = await Promise.all(ids.slice(i, i + 50).map((appId) => deliver(appId, n)));
        for (const a of answers)
          statuses.set(a.response.statusCode, (statuses.get(a.response.statusCode) ?? 0) + 1);
      }
    const stranger = await deliver("not-allowed", 0);

    // Assess
    expect(Object.fromEntries(statuses)).toEqual({ 200: 2 * APPS });
    expect(queue.sent).toHaveLength(2 * APPS);
    expect(stranger.response.statusCode).toBe(403);
    expect(reads.n).toBe(APPS + 1);
  }, 120_000);
});
