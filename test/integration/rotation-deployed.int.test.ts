import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { connectApps } from "../../shared/apps/connect";
import { dynamoAppRegistry } from "../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../shared/apps/management-api";
import { rotateCredentials } from "../../shared/apps/rotate";
import { authenticateBasic } from "../../shared/ingest/credentials";
import { secretCredentialSource } from "../../shared/ingest/secret-credentials";
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

describe("rotate-credentials against a deployed stack's configuration (the credentials secret by a stub)", () => {
  it("adds the new pair to the secret, switches every app, and leaves only the new one; the ingest's cache accepts each in turn", async () => {
    // Prepare: the secret with the current pair, the ingest's source over it, three connected apps.
    const old = { username: "webhook-old", password: "old-password-123" };
    const { client, state } = secretsStub({ credentials: [old] });
    const secretId = "arn:aws:secretsmanager:us-east-1:000000000000:secret:creds";
    // The ingest's source over it, its cache 1 s (60 deployed: the rotation waits it out either way).
    const ingest = secretCredentialSource({ secretId, maxAgeSeconds: 1, minRefreshIntervalMs: 0, client });
    const table = uniqueName("apps");
    await createAppsTable(dynamo, table);
    const registry = dynamoAppRegistry(documentClient(dynamo), table);
    const api = managementApi({ url: server.url, ...KEY, sleep: async () => undefined });
    const webhook = {
      id: "webhook-backend-prod",
      name: "Webhook backend prod",
      url: "https://hooks.example.com/webhook",
    };
    await connectApps({
      api,
      registry,
      appIds: APPS,
      desired: { ...webhook, ...old, triggers: ["message_sent"] },
    });
    const fresh = { username: "webhook-new", password: "new-password-4567" };
    const accepted = (c: { username: string; password: string }) =>
      authenticateBasic(basic(c.username, c.password), ingest).then((r) => r.ok);
    const steps: string[] = [];

    // Act
    const report = await rotateCredentials({
      store: secretCredentialStore(client, secretId),
      api,
      registry,
      apps: APPS.map((appId) => ({ appId, triggers: ["message_sent"], username: old.username })),
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
});
