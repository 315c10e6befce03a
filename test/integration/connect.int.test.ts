import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { connectApps, type DesiredWebhook } from "../../shared/apps/connect";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { createAppsTable } from "../../tools/local/provision";
import { type ManagementApiServer, startManagementApi } from "../../tools/simulate/management-api";
import { testClients, uniqueName } from "../support/aws";

const { dynamo } = testClients();
const KEY = { key: "mgmt-key", secret: "mgmt-secret" };
const APPS = Array.from({ length: 1_000 }, (_, i) => `tenant-${i}`);
const desired: DesiredWebhook = {
  id: "webhook-backend-test",
  name: "Webhook backend test",
  url: "https://hooks.example.com/webhook",
  username: "platform-webhook",
  password: "p4ssw0rd",
  triggers: [...KNOWN_TRIGGERS],
};
let server: ManagementApiServer;

const noSleep = async () => undefined;
const registryOf = async () => {
  const table = uniqueName("apps");
  await createAppsTable(dynamo, table);
  return dynamoAppRegistry(documentClient(dynamo), table);
};
const writes = () => (server.calls.get("POST webhooks") ?? 0) + (server.calls.get("PUT webhooks") ?? 0);

beforeAll(async () => {
  server = await startManagementApi({ ...KEY, appIds: [...APPS, "refusing-app"] });
});
afterAll(() => server.close());

describe("connect against the simulated management API", () => {
  it("connects 1,000 apps with one list and one write each, and a second run writes nothing", async () => {
    // Prepare: one app already has our webhook pointing elsewhere, one has a webhook of its own
    const registry = await registryOf();
    const api = managementApi({ url: server.url, ...KEY, sleep: noSleep });
    await api.createWebhook("tenant-1", {
      ...desired,
      webhookURL: "https://old.example.com/x",
      useBasicAuth: true,
      enabled: false,
      triggers: [],
    });
    await api.createWebhook("tenant-2", {
      ...desired,
      id: "theirs",
      name: "theirs",
      webhookURL: "https://other.example.com",
      useBasicAuth: true,
      enabled: true,
      triggers: [...desired.triggers],
    });
    server.calls.clear();

    // Act
    const started = Date.now();
    const first = await connectApps({ api, registry, appIds: APPS, desired });
    const firstMs = Date.now() - started;
    const firstWrites = writes();
    const firstLists = server.calls.get("GET webhooks");
    server.calls.clear();
    const second = await connectApps({ api, registry, appIds: APPS, desired });

    // Assess
    expect(first.apps.filter((a) => a.error)).toEqual([]);
    expect(first.apps.filter((a) => a.action === "create")).toHaveLength(999);
    expect(first.apps.find((a) => a.appId === "tenant-1")).toMatchObject({
      action: "update",
      changes: expect.arrayContaining(["webhookURL", "enabled", "triggers"]),
    });
    expect(firstLists).toBe(1_000);
    expect(firstWrites).toBe(1_000);
    expect(first.calls).toEqual({ list: 1_000, write: 1_000 });
    expect(second.apps.every((a) => a.action === "unchanged" && !a.error)).toBe(true);
    expect(writes()).toBe(0);
    expect(server.calls.get("GET webhooks")).toBe(1_000);
    // Every app delivers each trigger to exactly our webhook, with our credential.
    for (const appId of APPS) {
      const targets = server.deliveriesFor(appId, "message_sent").filter((w) => w.webhookURL === desired.url);
      expect(targets).toEqual([
        expect.objectContaining({
          username: desired.username,
          password: desired.password,
          useBasicAuth: true,
        }),
      ]);
    }
    expect(server.apps.get("tenant-2")?.webhooks.size).toBe(2); // theirs is left alone
    // The apps are allowed and their webhooks recorded: --all-apps finds them.
    const known = await registry.list();
    expect(known.size).toBe(1_000);
    expect([...known.values()].every((a) => a.allowed && a.webhook?.username === desired.username)).toBe(
      true,
    );
    console.log(
      `connect: 1,000 apps in ${firstMs} ms, ${firstLists} lists + ${firstWrites} writes; second run 0 writes`,
    );
  }, 120_000);

  it("plans without writing on a dry run", async () => {
    const registry = await registryOf();
    const api = managementApi({ url: server.url, ...KEY, sleep: noSleep });
    server.calls.clear();
    const plan = await connectApps({ api, registry, appIds: ["refusing-app"], desired, dryRun: true });
    expect(plan.apps).toEqual([{ appId: "refusing-app", action: "create", changes: ["webhook"] }]);
    expect(writes()).toBe(0);
    expect((await registry.list()).size).toBe(0);
  });

  it("stops at once on a wrong key or secret, naming where they come from", async () => {
    const registry = await registryOf();
    const api = managementApi({ url: server.url, key: "wrong", secret: "wrong", sleep: noSleep });
    await expect(connectApps({ api, registry, appIds: APPS.slice(0, 10), desired })).rejects.toThrow(
      /refused the key and secret \(401\).*PLATFORM_MANAGEMENT_KEY/,
    );
  });

  it("reports an unknown app and a refused field per app, and connects the others", async () => {
    const registry = await registryOf();
    const api = managementApi({ url: server.url, ...KEY, sleep: noSleep });
    const unknown = await connectApps({ api, registry, appIds: ["no-such-app", "tenant-5"], desired });
    expect(unknown.apps.find((a) => a.appId === "no-such-app")?.error).toMatch(
      /does not know app no-such-app/,
    );
    expect(unknown.apps.find((a) => a.appId === "tenant-5")?.error).toBeUndefined();
    const http = await connectApps({
      api,
      registry,
      appIds: ["refusing-app"],
      desired: { ...desired, url: "http://insecure.example.com/webhook" },
    });
    expect(http.apps[0]?.error).toMatch(/refused it \(400: webhookURL must be HTTPS\)/);
    await expect(
      connectApps({ api, registry, appIds: ["x"], desired: { ...desired, id: "i".repeat(51) } }),
    ).rejects.toThrow(/at most 50/);
  });

  it("backs off on throttling and server errors, and gives up with one line after its retries", async () => {
    const flaky = await startManagementApi({
      ...KEY,
      appIds: ["a"],
      faults: (n) => (n <= 3 ? (n === 2 ? 500 : 429) : undefined),
    });
    const waits: number[] = [];
    try {
      const api = managementApi({ url: flaky.url, ...KEY, sleep: async (ms) => void waits.push(ms) });
      const report = await connectApps({ api, registry: await registryOf(), appIds: ["a"], desired });
      expect(report.apps[0]).toMatchObject({ action: "create" });
      expect(waits).toHaveLength(3);
    } finally {
      await flaky.close();
    }
    const down = await startManagementApi({ ...KEY, appIds: ["a"], faults: () => 503 });
    try {
      const api = managementApi({ url: down.url, ...KEY, maxRetries: 2, sleep: noSleep });
      await expect(api.listWebhooks("a")).rejects.toThrow(
        "GET /apps/a/webhooks: 503: simulated after 3 attempts",
      );
    } finally {
      await down.close();
    }
  });
});
