import { dynamoAppRegistry } from "../../../../shared/apps/dynamo-app-registry";
import { managementApi } from "../../../../shared/apps/management-api";
import { rotateCredentials } from "../../../../shared/apps/rotate";
import { dynamoRotationLock } from "../../../../shared/apps/rotation-lock";
import { ingestWebhook } from "../../../../shared/ingest/core";
import { decodeBasicAuthorization } from "../../../../shared/ingest/credentials";
import { secretCredentialStore } from "../../../../tools/ops/app-connection";
import { ingestProbe } from "../../../../tools/ops/ingest-probe";
import { ingestDeps, type Wiring } from "../../../support/writers-model/cores";
import type { Model, OpSpec } from "../../../support/writers-model/model";
import { type AppId, WEBHOOK } from "../../../support/writers-model/world";

const MANAGEMENT = { key: "wm-key", secret: "wm-secret" };

/**
 * `rotate-credentials` of the apps' credentials, its waits steps on the run's clock, its probe the
 * command's (`ingestProbe`) against the ingest core in process; with `fault`, the ingest answers 503
 * to every probe once the rotation removed an old pair (a deploy under way, a throttled secret).
 * Its own check: an old credential reported refused was answered 401 (only a 401 is a refusal).
 */
export async function rotate(m: Model, w: Wiring, o: Extract<OpSpec, { op: "rotate" }>): Promise<string> {
  const registry = dynamoAppRegistry(w.clients.doc, w.site.appsTable);
  const connected = [...(await registry.list())].flatMap(([appId, app]) =>
    app.webhook ? [{ appId, triggers: app.webhook.triggers, username: app.webhook.username }] : [],
  );
  const chosen = connected.filter((a) => o.apps.includes(a.appId as AppId)).map((a) => a.username);
  const answered401 = new Set<string>();
  const putsBefore = w.site.secret.puts;
  const ingest: typeof fetch = async (_url, init) => {
    const headers = new Headers(init?.headers);
    if (o.fault && w.site.secret.puts > putsBefore + 1)
      return new Response('{"error":"unavailable"}', { status: 503 });
    const result = await ingestWebhook(
      {
        method: "POST",
        headers: { authorization: headers.get("authorization") ?? undefined },
        body: String(init?.body ?? ""),
        isBase64Encoded: false,
        receivedAt: w.site.clock.now,
      },
      ingestDeps(w),
    );
    const status = result.response.statusCode ?? 500;
    const decoded = decodeBasicAuthorization(headers.get("authorization") ?? undefined);
    if (status === 401 && typeof decoded === "object") answered401.add(decoded.username);
    return new Response(result.response.body ?? "", { status });
  };
  const busyFetch: typeof fetch = (input, init) =>
    w.gate.busy(w.actor, "management API", () => fetch(input, init));
  const sleep = async (ms: number) => {
    await w.gate.pause(w.actor, "rotation wait");
    w.site.clock.now += ms;
  };
  const report = await rotateCredentials({
    store: storeOf(w),
    api: managementApi({ url: w.site.management.url, ...MANAGEMENT, fetch: busyFetch, sleep }),
    registry,
    apps: connected,
    webhook: WEBHOOK,
    credentials: chosen,
    fresh: (old) => ({
      username: `${old.username.replace(/-\d+$/, "")}-${w.site.newId().slice(0, 6)}`,
      password: `pw-${w.site.newId()}`,
    }),
    probe: ingestProbe("http://ingest.model/webhook", ingest),
    // The command's lock: the apps table's lease, through the actor's client, on the run's clock.
    lock: {
      ...dynamoRotationLock(w.clients.doc, w.site.appsTable, () => w.site.clock.now),
      runId: w.site.newId,
    },
    waits: {
      probeEveryMs: 1_000,
      acceptWithinMs: 5_000,
      retireAfterMs: 45_000,
      cacheMs: 1_000,
      refuseWithinMs: 5_000,
    },
    sleep,
    now: () => w.site.clock.now,
  });
  for (const c of report.credentials) {
    if (c.outcome !== "rotated") continue;
    m.retired.push({ username: c.from, password: "" });
    if (!answered401.has(c.from))
      m.violations.push(
        `rotate-credentials reported ${c.from} refused (rotated) though the ingest never answered it 401`,
      );
  }
  return `${report.outcome}: ${report.credentials.map((c) => `${c.from}->${c.to} ${c.outcome}`).join(", ")}`;
}

/** The credentials secret as the command's store (`secretCredentialStore`), through the actor's client. */
const storeOf = (w: Wiring) => secretCredentialStore(w.clients.secrets, w.site.secretId);
