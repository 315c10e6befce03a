import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { connectApps } from "../../shared/apps/connect";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { rotateCredentials } from "../../shared/apps/rotate";
import { authenticateBasic } from "../../shared/ingest/credentials";
import { secretCredentialSource } from "../../shared/ingest/secret-credentials";
import { rotationLines } from "../../tools/cli/apps-output";
import { isoTime } from "../../tools/cli/format";
import { createAppsTable } from "../../tools/local/provision";
import { secretCredentialStore } from "../../tools/ops/app-connection";
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
    url: "https://hooks.example.com/webhook",
  };
  await connectApps({
    api,
    registry,
    appIds: APPS,
    desired: { ...webhook, ...old, triggers: ["message_sent"] },
  });
  const apps = APPS.map((appId) => ({ appId, triggers: ["message_sent"], username: old.username }));
  return { client, state, secretId, registry, api, webhook, apps };
}

describe("rotate-credentials against a deployed stack's configuration (the credentials secret by a stub)", () => {
  it("adds the new pair to the secret, switches every app, and leaves only the new one; the ingest's cache accepts each in turn", async () => {
    // Prepare: the secret with the current pair, the ingest's source over it, three connected apps.
    const old = { username: "webhook-old", password: "old-password-123" };
    const { client, state, secretId, registry, api, webhook, apps } = await connectedWith(
      old,
      "webhook-backend-prod",
    );
    // The ingest's source over it, its cache 1 s (60 deployed: the rotation waits it out either way).
    const ingest = secretCredentialSource({ secretId, maxAgeSeconds: 1, minRefreshIntervalMs: 0, client });
    const fresh = { username: "webhook-new", password: "new-password-4567" };
    const accepted = (c: { username: string; password: string }) =>
      authenticateBasic(basic(c.username, c.password), ingest).then((r) => r.ok);
    const steps: string[] = [];

    // Act
    const report = await rotateCredentials({
      store: secretCredentialStore(client, secretId),
      api,
      registry,
      apps,
      webhook,
      fresh: () => fresh,
      accepts: accepted,
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
    const { client, state, secretId, registry, api, webhook, apps } = await connectedWith(
      old,
      "webhook-backend-other",
    );
    const fresh = { username: "webhook-new2", password: "new-password-4567" };

    // Act
    const report = await rotateCredentials({
      store: secretCredentialStore(client, secretId),
      api,
      registry,
      apps,
      webhook,
      fresh: () => fresh,
      accepts: async () => true,
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
