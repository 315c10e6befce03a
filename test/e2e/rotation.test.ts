import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { connectApps } from "../../shared/apps/connect";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { type ManagementApi, managementApi } from "../../shared/apps/management-api";
import { rotateCredentials } from "../../shared/apps/rotate";
import { dynamoRotationLock } from "../../shared/apps/rotation-lock";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { credentialsFilePath, fileCredentialStore } from "../../tools/local/credentials-store";
import { freePort } from "../../tools/local/emulators";
import { type LocalStack, startLocalStack } from "../../tools/local/stack";
import { ingestProbe } from "../../tools/ops/ingest-probe";
import { type ManagementApiServer, startManagementApi } from "../../tools/simulate/management-api";
import { runSimulation } from "../../tools/simulate/run";
import { runProcess } from "../support/cli";
import { postWebhook } from "../support/ingest";
import { memberEvent } from "../support/local-process";

const KEY = { key: "mgmt-key", secret: "mgmt-secret" };
const APPS = Array.from({ length: 30 }, (_, i) => `rot-${i}`);
const WEBHOOK = { id: "webhook-backend-local", name: "Webhook backend local" };
const TRIGGERS = ["group_member_added"];
const dir = mkdtempSync(join(tmpdir(), "rotation-"));
const ROOT = new URL("../../", import.meta.url).pathname;
let stack: LocalStack;
let server: ManagementApiServer;
const cacheBefore = process.env.CREDENTIALS_CACHE_SECONDS;

/** The credential the simulated platform holds for an app's webhook to us: what it delivers with now. */
function platformCredential(appId: string): WebhookCredential {
  const hook = server.apps.get(appId)?.webhooks.get(WEBHOOK.id);
  if (!hook) throw new Error(`${appId} has no webhook to us`);
  return { username: hook.username, password: hook.password };
}

/** Deliveries from every app, each with its webhook's credential at the time, until `stop`; their statuses. */
function traffic(apps: readonly string[] = APPS) {
  const statuses: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const appId = apps[i % apps.length] as string;
      const { status } = await postWebhook(
        { webhookUrl: stack.info.webhookUrl, credentials: platformCredential(appId) },
        memberEvent(appId, i),
      );
      statuses.push(status);
    }
  })();
  return {
    statuses,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** The rotation's waits here: the ingest's cache is 2 s (`CREDENTIALS_CACHE_SECONDS` below), the platform's retries 3 s. */
const WAITS = {
  probeEveryMs: 250,
  acceptWithinMs: 20_000,
  retireAfterMs: 3_000,
  cacheMs: 2_000,
  refuseWithinMs: 10_000,
};

const accepts = (credential: WebhookCredential) =>
  postWebhook({ webhookUrl: stack.info.webhookUrl, credentials: credential }, "").then(
    (r) => r.status !== 401 && r.status < 500 && r.status !== 0,
  );

beforeAll(async () => {
  // The ingest's credential cache: 2 s instead of 60, so that the test waits seconds, not minutes.
  process.env.CREDENTIALS_CACHE_SECONDS = "2";
  stack = await startLocalStack({ port: await freePort(), stateDir: dir, inMemory: true, logMode: "silent" });
  server = await startManagementApi({ ...KEY, appIds: APPS, allowHttp: true });
}, 300_000);

afterAll(async () => {
  await server?.close();
  await stack?.stop();
  if (cacheBefore === undefined) delete process.env.CREDENTIALS_CACHE_SECONDS;
  else process.env.CREDENTIALS_CACHE_SECONDS = cacheBefore;
});

describe("rotate-credentials on the local stack, against the simulated management API (#32)", () => {
  it("switches 30 apps under traffic with no delivery refused, then refuses the old credential; a refused update leaves both valid until a re-run", async () => {
    // Prepare: the store as the stack started with it (a test before this one may have rotated
    // it), and every app connected with the stack's credential.
    const store = fileCredentialStore(credentialsFilePath(dir));
    const old = stack.info.credentials;
    await store.write([old]);
    await expect.poll(() => accepts(old), { timeout: 60_000 }).toBe(true);
    const registry = dynamoAppRegistry(documentClient(stack.clients.dynamo), stack.info.appsTable ?? "");
    const api = managementApi({ url: server.url, ...KEY, sleep: async () => undefined });
    const webhook = { ...WEBHOOK, url: stack.info.webhookUrl };
    const connected = await connectApps({
      api,
      registry,
      appIds: APPS,
      desired: { ...webhook, ...stack.info.credentials, triggers: TRIGGERS },
    });
    expect(connected.apps.filter((a) => a.error)).toEqual([]);
    // One app's update is refused the first time (a fault injected in the client: the simulator
    // would refuse every write alike).
    let refusals = 1;
    const flaky: ManagementApi = {
      ...api,
      updateWebhook: async (appId, settings) => {
        if (appId === "rot-7" && refusals-- > 0) throw new Error("injected: the platform refused the update");
        return api.updateWebhook(appId, settings);
      },
    };
    const options = {
      store,
      registry,
      apps: APPS.map((appId) => ({ appId, triggers: TRIGGERS, username: old.username })),
      webhook,
      fresh: () => ({ username: "rotated-1", password: "a-new-password-of-thirty-chars" }),
      probe: ingestProbe(stack.info.webhookUrl),
      lock: dynamoRotationLock(documentClient(stack.clients.dynamo), stack.info.appsTable ?? ""),
      waits: WAITS,
    };
    const load = traffic();

    // Act: a first run that cannot switch rot-7, then a re-run.
    const first = await rotateCredentials({ ...options, api: flaky });
    const storedBetween = await store.list();
    const second = await rotateCredentials({
      ...options,
      api,
      fresh: () => ({ username: "never", password: "never-used-password" }),
    });
    await load.stop();

    // Assess: the first run stopped with both valid, naming rot-7; the re-run finished the same rotation.
    expect(first.outcome).toBe("incomplete");
    expect(first.stillOld).toEqual(["rot-7"]);
    expect(storedBetween.map((c) => c.username)).toEqual([old.username, "rotated-1"]);
    expect(second.outcome).toBe("rotated");
    expect(second.confirmed).toHaveLength(APPS.length);
    expect((await store.list()).map((c) => c.username)).toEqual(["rotated-1"]);
    for (const appId of APPS) expect(platformCredential(appId).username).toBe("rotated-1");
    // Every delivery of the traffic was accepted: none refused, none lost to a 401.
    expect(load.statuses.length).toBeGreaterThan(APPS.length);
    expect(load.statuses.filter((s) => s !== 200)).toEqual([]);
    // The old credential is refused when the rotation returns: it waited for the ingest's cache.
    expect(await accepts(old)).toBe(false);
    expect(second.credentials[0]?.refusedAt).toBeGreaterThanOrEqual(
      second.credentials[0]?.acceptedUntil ?? 0,
    );
    expect(await accepts({ username: "rotated-1", password: "a-new-password-of-thirty-chars" })).toBe(true);
  }, 300_000);

  it("delivers each app's events only to its enabled webhooks, with their credentials (simulate --connect's loop)", async () => {
    // Prepare: three apps subscribed to every trigger with the current credential; rot-3's webhook disabled.
    const registry = dynamoAppRegistry(documentClient(stack.clients.dynamo), stack.info.appsTable ?? "");
    const api = managementApi({ url: server.url, ...KEY, sleep: async () => undefined });
    const [current] = await fileCredentialStore(credentialsFilePath(dir)).list();
    const apps = ["rot-1", "rot-2", "rot-3"];
    await connectApps({
      api,
      registry,
      appIds: apps,
      desired: {
        ...WEBHOOK,
        url: stack.info.webhookUrl,
        ...(current as WebhookCredential),
        triggers: [...KNOWN_TRIGGERS],
      },
    });
    const hook = server.apps.get("rot-3")?.webhooks.get(WEBHOOK.id);
    if (hook) hook.enabled = false;

    // Act: credentials that the stack refuses as the simulator's own: only the webhooks' are used.
    const report = await runSimulation({
      url: stack.info.webhookUrl,
      username: "not-the-webhooks",
      password: "wrong-password",
      events: 300,
      rate: 2000,
      concurrency: 8,
      seed: 5,
      apps,
      duplicateShare: 0,
      reorderShare: 0,
      settleTimeoutSeconds: 60,
      webhooks: (appId, trigger) => server.deliveriesFor(appId, trigger),
    });

    // Assess
    const rot3 = report.history.events.filter((e) => e.appId === "rot-3").length;
    expect(rot3).toBeGreaterThan(0);
    expect(report.byStatus).toEqual({ "200": report.sent - rot3, unsubscribed: rot3 });
  }, 300_000);

  it("runs simulate --connect: connects the apps through the simulated management API, then delivers through their webhooks", async () => {
    const run = await runProcess(
      join(ROOT, "node_modules/.bin/node"),
      [
        join(ROOT, "bin/webhook.mjs"),
        "simulate",
        "--connect",
        "--apps",
        "cli-1,cli-2",
        "--files-port",
        "0",
        "--events",
        "60",
        "--no-check",
        "--state-dir",
        dir,
      ],
      { cwd: ROOT, timeout: 100_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /management API: http:\/\/127\.0\.0\.1:\d+ \(up while this simulation runs, stopped when it ends\); 2 apps connected/,
    );
    expect(run.stdout).toContain("npx webhook rotate-credentials");
    // #42 item 10: the environment it printed stops working when it exits, and it says so.
    expect(run.stdout).toContain("management API stopped: the environment printed above no longer connects");
    const registry = dynamoAppRegistry(documentClient(stack.clients.dynamo), stack.info.appsTable ?? "");
    const known = await registry.list();
    expect(known.get("cli-1")?.webhook?.url).toBe(stack.info.webhookUrl);
  }, 300_000);

  it("rotates one credential, then every one, of a store with a credential per app under traffic: every delivery 200, each new one keeps its apps, the others untouched, each old one refused on return (#40 items 8, 9)", async () => {
    // Prepare: the stack's credential for any app, and two limited to their apps (docs/how-it-works.md);
    // each app connected with the one it may use.
    const registry = dynamoAppRegistry(documentClient(stack.clients.dynamo), stack.info.appsTable ?? "");
    const api = managementApi({ url: server.url, ...KEY, sleep: async () => undefined });
    const webhook = { ...WEBHOOK, url: stack.info.webhookUrl };
    const store = fileCredentialStore(credentialsFilePath(dir));
    const [any] = (await store.list()) as [WebhookCredential];
    const a: WebhookCredential = {
      username: "per-app-a",
      password: "password-of-app-a-123",
      appIds: ["rot-10", "rot-11"],
    };
    const b: WebhookCredential = {
      username: "per-app-b",
      password: "password-of-app-b-456",
      appIds: ["rot-12"],
    };
    await store.write([any, a, b]);
    await expect.poll(async () => (await accepts(a)) && (await accepts(b)), { timeout: 20_000 }).toBe(true);
    const owners: Array<[WebhookCredential, string[]]> = [
      [any, ["rot-13", "rot-14"]],
      [a, ["rot-10", "rot-11"]],
      [b, ["rot-12"]],
    ];
    for (const [credential, appIds] of owners)
      await connectApps({
        api,
        registry,
        appIds,
        desired: {
          ...webhook,
          username: credential.username,
          password: credential.password,
          triggers: TRIGGERS,
        },
      });
    // The apps as rotate-credentials reads them: each with the credential its webhook delivers with.
    const connectedApps = async () =>
      [...(await registry.list()).values()].flatMap((app) =>
        app.webhook && owners.some(([, ids]) => ids.includes(app.appId))
          ? [{ appId: app.appId, triggers: app.webhook.triggers, username: app.webhook.username }]
          : [],
      );
    let made = 0;
    const options = {
      store,
      api,
      registry,
      webhook,
      fresh: (old: WebhookCredential) => ({
        username: `${old.username.slice(0, 40)}-r${++made}`,
        password: `new-password-${made}-0123456789`,
      }),
      probe: ingestProbe(stack.info.webhookUrl),
      lock: dynamoRotationLock(documentClient(stack.clients.dynamo), stack.info.appsTable ?? ""),
      waits: WAITS,
    };
    const load = traffic(owners.flatMap(([, ids]) => ids));

    // Act: rotate a's credential alone, then every credential.
    const one = await rotateCredentials({
      ...options,
      apps: await connectedApps(),
      credentials: ["per-app-a"],
    });
    const afterOne = await store.list();
    const refusedA = await accepts(a);
    const all = await rotateCredentials({ ...options, apps: await connectedApps() });
    const afterAll = await store.list();
    await load.stop();

    // Assess: the first rotation made one credential for a's apps only and left the others as they were.
    expect(one.outcome).toBe("rotated");
    expect(one.credentials.map((c) => [c.from, c.to, c.confirmed])).toEqual([
      ["per-app-a", "per-app-a-r1", ["rot-10", "rot-11"]],
    ]);
    expect(afterOne).toEqual([
      any,
      b,
      { username: "per-app-a-r1", password: "new-password-1-0123456789", appIds: ["rot-10", "rot-11"] },
    ]);
    expect(refusedA).toBe(false);
    // Then every credential, each new one keeping its old one's apps, each old one refused.
    expect(all.outcome).toBe("rotated");
    expect(new Map(all.credentials.map((c) => [c.from, c.confirmed.sort()]))).toEqual(
      new Map([
        [any.username, ["rot-13", "rot-14"]],
        ["per-app-b", ["rot-12"]],
        ["per-app-a-r1", ["rot-10", "rot-11"]],
      ]),
    );
    expect(afterAll.map((c) => [c.username.replace(/(-r\d+)+$/, ""), c.appIds, c.replaces])).toEqual([
      [any.username.slice(0, 40), undefined, undefined],
      ["per-app-b", ["rot-12"], undefined],
      ["per-app-a", ["rot-10", "rot-11"], undefined],
    ]);
    for (const old of [any, b, afterOne[2] as WebhookCredential]) expect(await accepts(old)).toBe(false);
    for (const [, appIds] of owners)
      for (const appId of appIds)
        expect(afterAll.some((c) => c.username === platformCredential(appId).username)).toBe(true);
    // Every delivery of every app was accepted: no 401, no 403 (a pair another app may not use).
    expect(load.statuses.length).toBeGreaterThan(10);
    expect(load.statuses.filter((s) => s !== 200)).toEqual([]);
  }, 300_000);
});
