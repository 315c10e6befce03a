import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DesiredWebhook } from "../../shared/apps/connect";
import type { KnownApp } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { APP_RECORD } from "../../shared/apps/records";
import { checkPlatformWebhooks, type WebhookFinding } from "../../shared/watchdog/platform-check";
import { type ManagementApiServer, startManagementApi } from "../../tools/simulate/management-api";

const KEY = { key: "mgmt-key", secret: "mgmt-secret" };
const APPS = Array.from({ length: 1_000 }, (_, i) => `tenant-${String(i).padStart(4, "0")}`);
const desired: DesiredWebhook = {
  id: "webhook-backend-test",
  name: "Webhook backend test",
  url: "https://hooks.example.com/webhook",
  username: "platform-webhook",
  password: "p4ssw0rd",
  triggers: ["message_sent"],
};
const noSleep = async () => undefined;
let server: ManagementApiServer;
// Every 50th request is answered 429 once (the platform's throttle): retried, never a finding.
let throttled = 0;

beforeAll(async () => {
  server = await startManagementApi({
    ...KEY,
    appIds: APPS,
    faults: (n) => {
      if (n % 50 !== 0) return undefined;
      throttled++;
      return 429;
    },
  });
});
afterAll(() => server.close());

describe("apps --check against the simulated management API (#52)", () => {
  it("reads 1,000 connected apps at bounded concurrency through 429s and reports the four that changed on the platform's side", async () => {
    // Prepare: every app connected (its webhook on the platform, its record in the apps table),
    // then the platform's side changed by hand for four of them
    const apps: KnownApp[] = APPS.map((appId) => {
      server.apps.get(appId)?.webhooks.set(desired.id, {
        id: desired.id,
        name: desired.name,
        webhookURL: desired.url,
        useBasicAuth: true,
        username: desired.username,
        password: desired.password,
        enabled: true,
        triggers: [...desired.triggers],
      });
      return {
        appId,
        allowed: true,
        webhook: {
          appId,
          record: APP_RECORD.webhook,
          webhookId: desired.id,
          url: desired.url,
          username: desired.username,
          triggers: [...desired.triggers],
          enabled: true,
          updatedAt: "2026-01-02T00:00:00.000Z",
        },
      };
    });
    const hook = (appId: string) => server.apps.get(appId)?.webhooks.get(desired.id);
    const set = (appId: string, change: object) => Object.assign(hook(appId) ?? {}, change);
    set("tenant-0001", { enabled: false });
    set("tenant-0002", { webhookURL: "https://elsewhere.example.com/hooks" });
    set("tenant-0003", { username: "renamed-by-hand" });
    server.apps.get("tenant-0004")?.webhooks.delete(desired.id);
    server.calls.clear();
    throttled = 0;
    let inFlight = 0;
    let most = 0;
    const counting: typeof fetch = async (input, init) => {
      most = Math.max(most, ++inFlight);
      try {
        return await fetch(input, init);
      } finally {
        inFlight--;
      }
    };

    // Act
    const findings: WebhookFinding[] = [];
    const counts = await checkPlatformWebhooks({
      api: managementApi({ url: server.url, ...KEY, sleep: noSleep, fetch: counting }),
      apps,
      webhookUrl: desired.url,
      acceptedUsernames: () => [desired.username],
      concurrency: 4,
      onFinding: (f) => findings.push(f),
    });

    // Assess
    expect(findings).toHaveLength(1_000);
    expect(findings.filter((f) => f.state !== "ok").map((f) => [f.appId, f.state])).toEqual(
      expect.arrayContaining([
        ["tenant-0001", "disabled"],
        ["tenant-0002", "points-elsewhere"],
        ["tenant-0003", "username-refused"],
        ["tenant-0004", "missing"],
      ]),
    );
    expect(counts).toMatchObject({ ok: 996, unchecked: 0 });
    expect(throttled).toBeGreaterThan(15);
    expect(server.calls.get("GET webhooks")).toBe(1_000 + throttled);
    expect(most).toBeLessThanOrEqual(4);
    // Never a write: the check reads only.
    expect([...server.calls.keys()].filter((k) => !k.startsWith("GET"))).toEqual([]);
    expect(JSON.stringify(findings)).not.toContain(desired.password);

    // Resumed after the last app a first run reported: only the rest is read.
    server.calls.clear();
    const rest: string[] = [];
    await checkPlatformWebhooks({
      api: managementApi({ url: server.url, ...KEY, sleep: noSleep }),
      apps,
      webhookUrl: desired.url,
      acceptedUsernames: () => [desired.username],
      after: "tenant-0989",
      onFinding: (f) => rest.push(f.appId),
    });
    expect(rest.sort()).toEqual(APPS.slice(990));
  });
});
