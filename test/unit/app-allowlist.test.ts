import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cachedAllowlist } from "../../shared/apps/allowlist";

const TTL = { allowedTtlMs: 60_000, refusedTtlMs: 5_000 };
const appIds = (n: number) => Array.from({ length: n }, (_, i) => `app-${i}`);

/** A store of allowed apps that counts its reads (the thing the cache is about). */
function countedStore(allowed: Iterable<string>) {
  const apps = new Set(allowed);
  const reads = new Map<string, number>();
  return {
    apps,
    reads,
    total: () => [...reads.values()].reduce((a, b) => a + b, 0),
    lookup: async (appId: string) => {
      reads.set(appId, (reads.get(appId) ?? 0) + 1);
      return apps.has(appId);
    },
  };
}

describe("the cached app allowlist", () => {
  it("holds 10,000 apps: one read per app, none for the deliveries after it within the lifetime", async () => {
    // Prepare
    const ids = appIds(10_000);
    const store = countedStore(ids);
    let now = 0;
    const allowlist = cachedAllowlist(store.lookup, { ...TTL, now: () => now });

    // Act: three deliveries per app, interleaved
    const answers = [];
    for (let round = 0; round < 3; round++) for (const id of ids) answers.push(await allowlist.allows(id));

    // Assess
    expect(answers.every(Boolean)).toBe(true);
    expect(store.total()).toBe(10_000);
    expect([...store.reads.values()].every((n) => n === 1)).toBe(true);

    // After the lifetime each app is read once more, at its next delivery.
    now += TTL.allowedTtlMs;
    for (const id of ids) await allowlist.allows(id);
    expect(store.total()).toBe(20_000);
  });

  it("remembers a refusal for the short lifetime only: an app allowed meanwhile is accepted after it", async () => {
    const store = countedStore([]);
    let now = 0;
    const allowlist = cachedAllowlist(store.lookup, { ...TTL, now: () => now });
    expect(await allowlist.allows("new-app")).toBe(false);
    store.apps.add("new-app");
    for (let i = 0; i < 50; i++) expect(await allowlist.allows("new-app")).toBe(false);
    expect(store.total()).toBe(1);
    now += TTL.refusedTtlMs;
    expect(await allowlist.allows("new-app")).toBe(true);
    expect(store.total()).toBe(2);
  });

  it("shares one read among concurrent first deliveries of an app", async () => {
    const store = countedStore(["a"]);
    const allowlist = cachedAllowlist(store.lookup, TTL);
    const answers = await Promise.all(Array.from({ length: 100 }, () => allowlist.allows("a")));
    expect(answers.every(Boolean)).toBe(true);
    expect(store.total()).toBe(1);
  });

  it("keeps the last answer when a re-read fails, and throws when the first read fails", async () => {
    let failing = false;
    let now = 0;
    const allowlist = cachedAllowlist(
      async (appId) => {
        if (failing) throw new Error("store down");
        return appId === "a";
      },
      { ...TTL, now: () => now },
    );
    expect(await allowlist.allows("a")).toBe(true);
    failing = true;
    now += TTL.allowedTtlMs * 2;
    expect(await allowlist.allows("a")).toBe(true);
    await expect(allowlist.allows("b")).rejects.toThrow("store down");
    failing = false;
    expect(await allowlist.allows("b")).toBe(false);
  });

  it("forgets the oldest reads beyond its size, and still answers them right", async () => {
    const store = countedStore(appIds(30));
    const allowlist = cachedAllowlist(store.lookup, { ...TTL, maxEntries: 10 });
    for (const id of appIds(30)) await allowlist.allows(id);
    expect(await allowlist.allows("app-29")).toBe(true); // recent: cached
    expect(store.total()).toBe(30);
    expect(await allowlist.allows("app-0")).toBe(true); // forgotten: read again
    expect(store.total()).toBe(31);
  });

  it("answers what the store says, for any sequence of deliveries and clock steps", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 70_000 })), {
          maxLength: 200,
        }),
        async (steps) => {
          const allowed = new Set(appIds(21).filter((_, i) => i % 3 !== 0));
          let now = 0;
          const allowlist = cachedAllowlist(async (id) => allowed.has(id), { ...TTL, now: () => now });
          for (const [app, step] of steps) {
            now += step;
            expect(await allowlist.allows(`app-${app}`)).toBe(allowed.has(`app-${app}`));
          }
        },
      ),
    );
  });
});
