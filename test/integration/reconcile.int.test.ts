import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { documentClient, dynamoItemStore } from "../../shared/adapters/dynamo-item-store";
import { PRESENCE_TABLE, type TableNames } from "../../shared/platform/tables";
import { projectionStores } from "../../shared/projector/stores";
import { onlineUids } from "../../shared/reconcile/dynamo-online-users";
import { listPlatformUsers, PlatformAuthError, platformBaseUrl } from "../../shared/reconcile/platform-users";
import { reconcilePresence } from "../../shared/reconcile/reconcile";
import { reconcileAll } from "../../shared/reconcile/run";
import { createProjectionTables, localTableNames } from "../../tools/local/provision";
import { analyticsQueries } from "../../tools/query/queries";
import { checkTables } from "../../tools/simulate/check";
import { type ExpectedApp, generateHistory } from "../../tools/simulate/generator";
import { simulatedApiKey, startPlatformApi } from "../../tools/simulate/platform-api";
import { testClients, uniqueName } from "../support/aws";
import { fixture } from "../support/fixtures";
import { memoryDeps, memoryItemStore, memoryStores, projectAll } from "../support/projection";

const { dynamo } = testClients();
const doc = documentClient(dynamo);
let names: TableNames;

beforeAll(async () => {
  names = localTableNames(uniqueName("reconcile"));
  await createProjectionTables(dynamo, names);
});

const users = (n: number, online: number[]): Pick<ExpectedApp, "users" | "online"> => ({
  users: Array.from({ length: n }, (_, i) => ({ uid: `u${i}`, name: `User ${i}` })),
  online: new Set(online.map((i) => `u${i}`)),
});
const noSleep = async () => undefined;

describe("the platform's user listing", () => {
  it("reads every page (perPage, page from 1) and knows when it is complete", async () => {
    const api = await startPlatformApi(new Map([["app1", users(25, [1, 2])]]));
    try {
      const listing = await listPlatformUsers({
        baseUrl: api.baseUrl("app1"),
        apiKey: simulatedApiKey("app1"),
        appId: "app1",
        perPage: 10,
      });
      expect(listing).toMatchObject({ complete: true, pages: 3 });
      expect(listing.users.map((u) => u.uid)).toEqual(Array.from({ length: 25 }, (_, i) => `u${i}`));
    } finally {
      await api.close();
    }
  });

  it("retries 429 (honouring Retry-After) and 5xx, and ends incomplete when a page keeps failing", async () => {
    let calls = 0;
    const flaky = await startPlatformApi(new Map([["app1", users(25, [])]]), {
      faults: (page) => (page === 2 && calls++ < 2 ? (calls === 1 ? 429 : 503) : undefined),
    });
    const broken = await startPlatformApi(new Map([["app1", users(25, [])]]), {
      faults: (page) => (page === 2 ? 500 : undefined),
    });
    try {
      const retried = await listPlatformUsers({
        baseUrl: flaky.baseUrl("app1"),
        apiKey: simulatedApiKey("app1"),
        appId: "app1",
        perPage: 10,
        sleep: noSleep,
      });
      expect(retried).toMatchObject({ complete: true, pages: 3 });
      const partial = await listPlatformUsers({
        baseUrl: broken.baseUrl("app1"),
        apiKey: simulatedApiKey("app1"),
        appId: "app1",
        perPage: 10,
        sleep: noSleep,
      });
      expect(partial).toMatchObject({ complete: false, pages: 1, error: "page 2: HTTP 500" });
      expect(partial.users).toHaveLength(10);
    } finally {
      await Promise.all([flaky.close(), broken.close()]);
    }
  });

  it("answers a refused API key with one clear error naming the app", async () => {
    const api = await startPlatformApi(new Map([["app1", users(3, [])]]));
    try {
      const error = await listPlatformUsers({
        baseUrl: api.baseUrl("app1"),
        apiKey: "wrong",
        appId: "app1",
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PlatformAuthError);
      expect((error as Error).message).toMatch(/app app1 \(HTTP 401\)/);
    } finally {
      await api.close();
    }
  });
});

describe("reconciling presence", () => {
  it("sets online and offline as listed, offlines who is online here but not listed online, and keeps the profile", async () => {
    const app = uniqueName("app");
    const presence = dynamoItemStore<PresenceState>(doc, PRESENCE_TABLE, names.presence);
    const stale = fixture("user_connection_status_changed");
    Object.assign(stale, { appId: app });
    Object.assign(stale.data, { timestamp: 1_700_000_000_000, status: "online" });
    stale.data.user.uid = "ghost";
    await projectAll([{ body: JSON.stringify(stale), receivedAt: 1_700_000_000_100, eventId: "g" }], {
      ...memoryDeps(),
      stores: projectionStores(dynamo, names),
    });
    expect(await onlineUids(doc, names.presence, app)).toEqual(["ghost"]);
    const listing = {
      complete: true,
      pages: 1,
      users: [
        {
          uid: "u1",
          name: "User 1",
          avatar: "https://a/1.png",
          role: "default",
          lastActiveAt: 1_763_000_000,
          status: "available",
        },
        { uid: "u2", status: "offline" },
        { uid: "u3", status: "busy" },
      ],
    };

    const summary = await reconcilePresence({
      appId: app,
      listing,
      fetchedAt: 1_800_000_000_000,
      onlineHere: await onlineUids(doc, names.presence, app),
      presence,
    });

    expect(summary).toMatchObject({ seen: 3, setOnline: 1, setOffline: 2, skipped: 1, complete: true });
    expect(await onlineUids(doc, names.presence, app)).toEqual(["u1"]);
    const queries = analyticsQueries(doc, names);
    // A reconcile fact is made of the listing alone (#57): it says nothing of when the status
    // changed, so `since` stays the last change a webhook reported; the device is unknown.
    expect(await queries.presence(app, "ghost")).toMatchObject({
      status: "offline",
      since: 1_700_000_000_000,
      platform: "unknown",
    });
    expect(await queries.presence(app, "u1")).toMatchObject({
      status: "online",
      name: "User 1",
      avatar: "https://a/1.png",
      role: "default",
      lastActiveAt: 1_763_000_000,
    });
  });

  it("never marks anyone offline for being absent from an incomplete listing", async () => {
    const store = memoryItemStore<PresenceState>();
    const listing = {
      complete: false,
      pages: 1,
      error: "page 2: HTTP 500",
      users: [{ uid: "u1", status: "online" }],
    };
    const summary = await reconcilePresence({
      appId: "a",
      listing,
      fetchedAt: 1_800_000_000_000,
      onlineHere: ["u9"],
      presence: store,
    });
    expect(summary).toMatchObject({ setOnline: 1, setOffline: 0, complete: false });
    expect(await store.get({ pk: "a#u9" })).toBeNull();
  });

  it("is a fact at the fetch time: a later webhook event wins, an older one arriving later does not undo it (any order)", async () => {
    const T = 1_800_000_000_000;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.integer({ min: -50, max: 50 }).filter((d) => d !== 0),
          { minLength: 1, maxLength: 6 },
        ),
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        fc.boolean(),
        fc.nat({ max: 6 }),
        async (offsets, onlineFlags, listedOnline, reconcileAt) => {
          const events = offsets.map((d, i) => {
            const e = fixture("user_connection_status_changed");
            e.appId = "a";
            e.data.user.uid = "u1";
            e.data.timestamp = T + d * 1000;
            e.data.status = onlineFlags[i] ? "online" : "offline";
            return { body: JSON.stringify(e), receivedAt: T + 60_000 + i, eventId: `e${i}` };
          });
          const stores = memoryStores();
          const deps = memoryDeps(stores);
          const reconcile = () =>
            reconcilePresence({
              appId: "a",
              listing: {
                complete: true,
                pages: 1,
                users: [{ uid: "u1", status: listedOnline ? "online" : "offline" }],
              },
              fetchedAt: T,
              onlineHere: [],
              presence: stores.presence,
            });
          for (const [i, e] of events.entries()) {
            if (i === reconcileAt) await reconcile();
            await projectAll([e], deps);
          }
          if (reconcileAt >= events.length) await reconcile();
          const latest = [
            ...offsets.map((d, i) => ({ at: d, online: onlineFlags[i] })),
            { at: 0, online: listedOnline },
          ].sort((x, y) => y.at - x.at)[0];
          expect((await stores.presence.get({ pk: "a#u1" }))?.status).toBe(
            latest?.online ? "online" : "offline",
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it("after a history delivered with a stretch of presence events dropped, reconciling from the simulated platform makes the tables match it", async () => {
    const app = uniqueName("sim");
    const history = generateHistory({ events: 600, seed: 11, apps: [app] });
    const presenceIndexes = history.events.flatMap((e, i) =>
      e.trigger === "user_connection_status_changed" ? [i] : [],
    );
    const dropped = new Set(
      presenceIndexes.slice(
        Math.floor(presenceIndexes.length / 3),
        Math.floor((2 * presenceIndexes.length) / 3),
      ),
    );
    const deliveries = history.events.flatMap((e, i) =>
      dropped.has(i) ? [] : [{ body: e.body, receivedAt: e.at + 300 + i, eventId: `e${i}` }],
    );
    const deps = { ...memoryDeps(), stores: projectionStores(dynamo, names) };
    await projectAll(deliveries, deps);
    const queries = analyticsQueries(doc, names);
    const before = await checkTables(history, queries, { recordings: false });
    expect(before.some((p) => p.includes("should be"))).toBe(true);

    const api = await startPlatformApi(history.expected);
    try {
      const listing = await listPlatformUsers({
        baseUrl: api.baseUrl(app),
        apiKey: simulatedApiKey(app),
        appId: app,
        perPage: 7,
      });
      await reconcilePresence({
        appId: app,
        listing,
        fetchedAt: Date.now(),
        onlineHere: await onlineUids(doc, names.presence, app),
        presence: dynamoItemStore<PresenceState>(doc, PRESENCE_TABLE, names.presence),
      });
    } finally {
      await api.close();
    }
    expect(await checkTables(history, queries, { recordings: false })).toEqual([]);
  });

  it("reconciles every app of the schedule, each at its region's host; an app that fails does not stop the others", async () => {
    const app = uniqueName("sched");
    const api = await startPlatformApi(new Map([[app, users(4, [0, 3])]]));
    try {
      const presence = dynamoItemStore<PresenceState>(doc, PRESENCE_TABLE, names.presence);
      const results = await reconcileAll(
        { "no-key-app": "us", [app]: "eu" },
        {
          doc,
          presenceTable: names.presence,
          presence,
          apiKeyFor: async (id) => (id === app ? simulatedApiKey(app) : undefined),
          now: Date.now,
          // The platform's host for the app's region, answered by the stand-in.
          fetch: (url, init) =>
            fetch(String(url).replace(platformBaseUrl(app, "eu"), api.baseUrl(app)), init),
        },
      );
      expect(
        results.map((r) => [r.appId, r.summary?.setOnline, (r.error as Error | undefined)?.message]),
      ).toEqual([
        ["no-key-app", undefined, "the API-keys secret has no key for app no-key-app"],
        [app, 2, undefined],
      ]);
      expect((await onlineUids(doc, names.presence, app)).sort()).toEqual(["u0", "u3"]);
    } finally {
      await api.close();
    }
  });
});
