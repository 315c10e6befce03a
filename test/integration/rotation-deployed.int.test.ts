import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { connectApps } from "../../shared/apps/connect";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { type ProbeAnswer, probeAnswer } from "../../shared/apps/ingest-probe";
import { managementApi } from "../../shared/apps/management-api";
import { rotateCredentials } from "../../shared/apps/rotate";
import { dynamoRotationLock, RotationLockedError } from "../../shared/apps/rotation-lock";
import { authenticateBasic } from "../../shared/ingest/credentials";
import { secretCredentialSource } from "../../shared/ingest/secret-credentials";
import { rotationLines } from "../../tools/cli/apps-output";
import { isoTime } from "../../tools/cli/format";
import { createAppsTable } from "../../tools/local/provision";
import { secretCredentialStore } from "../../tools/ops/app-connection";
import { ingestProbe } from "../../tools/ops/ingest-probe";
import { type ManagementApiServer, startManagementApi } from "../../tools/simulate/management-api";
import { testClients, uniqueName } from "../support/aws";
import { basic } from "../support/ingest";
import { secretsStub } from "../support/secrets";

const { dynamo } = testClients();
const KEY = { key: "k", secret: "s" };
const APPS = ["d-1", "d-2", "d-3"];
let server: ManagementApiServer;
beforeAll(async () => {
  server = await startManagementApi({ ...KEY, appIds: APPS });
});
afterAll(() => server.close());

/**
 * A deployment's credentials secret (a stub) holding `old`, and the apps connected with it
 * through the management API double under `webhookId`: what a rotation is given.
 */
async function connectedWith(old: { username: string; password: string }, webhookId: string) {
  const { client, state } = secretsStub({ credentials: [old] });
  const secretId = `arn:aws:secretsmanager:us-east-1:000000000000:secret:${webhookId}`;
  const table = uniqueName("apps");
  await createAppsTable(dynamo, table);
  const registry = dynamoAppRegistry(documentClient(dynamo), table);
  const api = managementApi({ url: server.url, ...KEY, sleep: async () => undefined });
  const webhook = {
    id: webhookId,
    name: `Webhook backend ${webhookId}`,
    url: `https://hooks.example.com/${webhookId}`,
  };
  await connectApps({
    api,
    registry,
    appIds: APPS,
    desired: { ...webhook, ...old, triggers: ["message_sent"] },
  });
  const apps = APPS.map((appId) => ({ appId, triggers: ["message_sent"], username: old.username }));
  // One rotation at a time: the lease in the apps table (DynamoDB Local).
  const lock = dynamoRotationLock(documentClient(dynamo), table);
  const store = secretCredentialStore(client, secretId);
  // What every rotation here is given but its new pair, its probe and its waits.
  const given = { store, api, registry, apps, webhook, lock };
  return { client, state, secretId, registry, api, webhook, apps, lock, store, given };
}

/** A probe from a yes/no check of the ingest's own source: accepted, or refused (a 401). */
const probeOf =
  (accepted: (c: { username: string; password: string }) => Promise<boolean>) =>
  async (c: { username: string; password: string }): Promise<ProbeAnswer> =>
    (await accepted(c)) ? "accepted" : "refused";

describe("rotate-credentials against a deployed stack's configuration (the credentials secret by a stub)", () => {
  it("adds the new pair to the secret, switches every app, and leaves only the new one; the ingest's cache accepts each in turn", async () => {
    // Prepare: the secret with the current pair, the ingest's source over it, three connected apps.
    const old = { username: "webhook-old", password: "old-password-123" };
    const { client, state, secretId, webhook, given } = await connectedWith(old, "webhook-backend-prod");
    // The ingest's source over it, its cache 1 s (60 deployed: the rotation waits it out either way).
    const ingest = secretCredentialSource({ secretId, maxAgeSeconds: 1, minRefreshIntervalMs: 0, client });
    const fresh = { username: "webhook-new", password: "new-password-4567" };
    const accepted = (c: { username: string; password: string }) =>
      authenticateBasic(basic(c.username, c.password), ingest).then((r) => r.ok);
    const steps: string[] = [];

    // Act
    const report = await rotateCredentials({
      ...given,
      fresh: () => fresh,
      probe: probeOf(accepted),
      waits: {
        probeEveryMs: 50,
        acceptWithinMs: 1_000,
        retireAfterMs: 1,
        cacheMs: 1_000,
        refuseWithinMs: 2_000,
      },
      onStep: (s) => steps.push(s),
    });

    // Assess: two writes of the secret (both pairs, then the new one), every app on the new pair
    // with its triggers kept, and the ingest's own cached source refuses the old pair when the rotation returns.
    expect(report.outcome).toBe("rotated");
    expect(report.confirmed).toEqual(APPS);
    expect(state.puts).toBe(2);
    expect(JSON.parse(state.value)).toEqual({ credentials: [fresh] });
    for (const appId of APPS) {
      const hook = server.apps.get(appId)?.webhooks.get(webhook.id);
      expect({ username: hook?.username, triggers: hook?.triggers }).toEqual({
        username: fresh.username,
        triggers: ["message_sent"],
      });
    }
    expect(steps.join("\n")).not.toContain(fresh.password);
    expect(await accepted(old)).toBe(false);
    expect(await accepted(fresh)).toBe(true);
    expect(report.credentials[0]?.refusedAt).toBeGreaterThanOrEqual(
      report.credentials[0]?.acceptedUntil ?? 0,
    );
  });

  it("reports 'still accepted' (the outcome on which the command exits 1) when the ingest keeps accepting the old pair past its cache: it reads another store", async () => {
    // Prepare: the secret with the current pair; an ingest that reads a copy of it that nothing
    // rotates (a stack pointed at another secret), which accepts both pairs.
    const old = { username: "webhook-old2", password: "old-password-123" };
    const { state, given } = await connectedWith(old, "webhook-backend-other");
    const fresh = { username: "webhook-new2", password: "new-password-4567" };

    // Act
    const report = await rotateCredentials({
      ...given,
      fresh: () => fresh,
      probe: async () => "accepted",
      waits: { probeEveryMs: 20, acceptWithinMs: 500, retireAfterMs: 1, cacheMs: 50, refuseWithinMs: 200 },
    });

    // Assess: the rotation is done in the store, and the report says the old pair is still accepted,
    // since when it left the store and until when the cache could explain it (what the command prints before it exits 1).
    expect(JSON.parse(state.value)).toEqual({ credentials: [fresh] });
    expect(report.outcome).toBe("still-accepted");
    const [rotation] = report.credentials;
    expect(rotation).toMatchObject({ outcome: "still-accepted", from: old.username, to: fresh.username });
    expect(rotation?.refusedAt).toBeUndefined();
    expect(rotationLines(report, false)).toEqual([
      `removed, still accepted: ${old.username} → ${fresh.username}; 3 apps switched; ${old.username} left the store at ${isoTime(rotation?.removedAt)} and was still accepted past the ingest's cache (${isoTime(rotation?.acceptedUntil)})`,
    ]);
  });
});

/** The waits of these tests: the ingest's source caches for 1 s. */
const QUICK = {
  probeEveryMs: 50,
  acceptWithinMs: 1_000,
  retireAfterMs: 1,
  cacheMs: 1_000,
  refuseWithinMs: 1_000,
};

describe("two rotations at once (#50, defect 5)", () => {
  it("the second, started when the first has read the store, is refused with nothing changed (the apps table's lease), and every app delivers with a credential the store holds", async () => {
    // Prepare: one secret, one apps table; the ingest's source over the secret.
    const old = { username: "webhook-old3", password: "old-password-123" };
    const { client, secretId, webhook, state, store, given } = await connectedWith(
      old,
      "webhook-backend-twice",
    );
    const ingest = secretCredentialSource({ secretId, maxAgeSeconds: 1, minRefreshIntervalMs: 0, client });
    const accepted = (c: { username: string; password: string }) =>
      authenticateBasic(basic(c.username, c.password), ingest).then((r) => r.ok);
    let secondListed!: () => void;
    const secondReads = new Promise<void>((resolve) => {
      secondListed = resolve;
    });
    let second: Promise<unknown> | undefined;
    const options = { ...given, probe: probeOf(accepted), waits: QUICK };

    // Act: the first rotation reads the store; before it writes, the second starts and (were it
    // let) reads the same list; then the first goes on.
    const first = await rotateCredentials({
      ...options,
      fresh: () => ({ username: "webhook-first", password: "first-password-123" }),
      store: {
        list: async () => {
          const read = await store.list();
          second ??= rotateCredentials({
            ...options,
            fresh: () => ({ username: "webhook-second", password: "second-password-123" }),
            store: {
              list: async () => {
                const list = await store.list();
                secondListed();
                return list;
              },
              write: store.write,
            },
          }).catch((error: unknown) => error);
          await Promise.race([secondReads, second]);
          return read;
        },
        write: store.write,
      },
    });
    const refused = await second;

    // Assess: the second refused before reading anything, naming the first's run; the first
    // rotated; every app's webhook delivers with a pair the store holds and the ingest accepts.
    expect(refused).toBeInstanceOf(RotationLockedError);
    expect((refused as RotationLockedError).holder).toMatch(/^rotate-credentials [0-9a-f]{8}$/);
    expect((refused as Error).message).toMatch(
      /^another rotation of this deployment's credentials is under way \(rotate-credentials [0-9a-f]{8}, its lease running until .+Z unless renewed\): nothing was changed; run again once it ends/,
    );
    expect(first.outcome).toBe("rotated");
    const held = JSON.parse(state.value).credentials as Array<{ username: string; password: string }>;
    expect(held).toEqual([{ username: "webhook-first", password: "first-password-123" }]);
    for (const appId of APPS) {
      const hook = server.apps.get(appId)?.webhooks.get(webhook.id);
      expect(held).toContainEqual({ username: hook?.username, password: hook?.password });
    }
    // The lease is released: a third rotation runs.
    const third = await rotateCredentials({
      ...options,
      store,
      apps: APPS.map((appId) => ({ appId, triggers: ["message_sent"], username: "webhook-first" })),
      fresh: () => ({ username: "webhook-third", password: "third-password-123" }),
    });
    expect(third.outcome).toBe("rotated");
  });
});

/**
 * An ingest in front of the stub secret's credential source (the ingest's own), over HTTP: 400 to
 * an authenticated empty body, 401 otherwise, as the ingest answers; with `fault`, 503 to
 * everything (an ingest in trouble), or no answer at all (its server closed).
 */
async function ingestDouble(source: Parameters<typeof authenticateBasic>[1]) {
  let fault: "503" | undefined;
  const server = createServer((request, response) => {
    void (async () => {
      if (fault === "503") return response.writeHead(503).end("Service Unavailable");
      const outcome = await authenticateBasic(request.headers.authorization, source);
      response.writeHead(outcome.ok ? 400 : 401).end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhook`,
    fail: () => {
      fault = "503";
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("the rotation's probe: only a 401 is a refusal (#50, defect 6)", () => {
  it("reads an answer strictly: 401 refused; 400 (an empty body, once authenticated) or 2xx accepted; anything else unclear", () => {
    expect(probeAnswer(401)).toBe("refused");
    for (const status of [400, 200, 204]) expect(probeAnswer(status)).toBe("accepted");
    for (const status of [500, 502, 503, 504, 429, 403, 404])
      expect(probeAnswer(status)).toEqual({ unclear: String(status) });
  });

  for (const fault of ["503", "no answer"] as const)
    it(`an ingest that answers ${fault === "503" ? "503" : "nothing (its server closed)"} once the old credential left the store: not 'rotated', but 'unconfirmed' (the command exits 1), with what it answered`, async () => {
      // Prepare: the ingest over the secret, faulty from the store's second write (the old pair
      // removed) on.
      const old = { username: `webhook-old-${fault.replace(" ", "")}`, password: "old-password-123" };
      const { client, secretId, state, store, given } = await connectedWith(
        old,
        `webhook-backend-probe-${fault.replace(" ", "")}`,
      );
      const ingest = await ingestDouble(
        secretCredentialSource({ secretId, maxAgeSeconds: 1, minRefreshIntervalMs: 0, client }),
      );
      let writes = 0;
      const fresh = { username: `webhook-new-${fault.replace(" ", "")}`, password: "new-password-4567" };

      // Act
      const report = await rotateCredentials({
        ...given,
        store: {
          list: store.list,
          write: async (list) => {
            await store.write(list);
            if (++writes === 2) await (fault === "503" ? ingest.fail() : ingest.close());
          },
        },
        fresh: () => fresh,
        probe: ingestProbe(ingest.url),
        waits: QUICK,
      });
      if (fault === "503") await ingest.close();

      // Assess: the store rotated; the old pair not called refused, and why.
      expect(JSON.parse(state.value)).toEqual({ credentials: [fresh] });
      const [rotation] = report.credentials;
      expect(rotation?.refusedAt).toBeUndefined();
      expect(report.outcome).toBe("unconfirmed");
      expect(rotation?.unclear).toBe(fault === "503" ? "503" : "no answer (ECONNREFUSED)");
      expect(rotationLines(report, false)).toEqual([
        `removed, refusal unconfirmed: ${old.username} → ${fresh.username}; 3 apps switched; ${old.username} left the store at ${isoTime(rotation?.removedAt)}, and the ingest answered ${rotation?.unclear} instead of 401 past its cache (${isoTime(rotation?.acceptedUntil)})`,
      ]);
    });

  it("a new credential the ingest answers 503 to, for the whole wait: the rotation stops saying it cannot tell, with both pairs valid", async () => {
    // Prepare
    const old = { username: "webhook-old-down", password: "old-password-123" };
    const { client, secretId, state, given } = await connectedWith(old, "webhook-backend-probe-down");
    const ingest = await ingestDouble(
      secretCredentialSource({ secretId, maxAgeSeconds: 1, minRefreshIntervalMs: 0, client }),
    );
    ingest.fail();
    const fresh = { username: "webhook-new-down", password: "new-password-4567" };

    // Act
    const stopped = await rotateCredentials({
      ...given,
      fresh: () => fresh,
      probe: ingestProbe(ingest.url),
      waits: QUICK,
    }).catch((error: unknown) => error);
    await ingest.close();

    // Assess
    expect((stopped as Error).message).toBe(
      "cannot tell whether the ingest accepts webhook-new-down: it answered 503 for 1 s: both credentials stay valid; check the ingest, then run again",
    );
    expect(JSON.parse(state.value).credentials.map((c: { username: string }) => c.username)).toEqual([
      old.username,
      fresh.username,
    ]);
  });
});
