import http from "node:http";
import type { AddressInfo } from "node:net";
import { ENGLISH } from "@webhook-backend/stream/parse";
import * as z from "zod/mini";
import { WEBHOOK_ID_MAX_LENGTH } from "../../shared/apps/management-api";

/** A webhook as the simulated platform keeps it. */
export interface SimulatedWebhook {
  id: string;
  name: string;
  webhookURL: string;
  useBasicAuth: boolean;
  username: string;
  password: string;
  enabled: boolean;
  triggers: string[];
}

/** The design notes' limit: an app has at most 25 webhooks. */
const MAX_WEBHOOKS_PER_APP = 25;

const webhookBody = z.object({
  id: z.optional(z.string()),
  name: z.string(),
  webhookURL: z.string(),
  useBasicAuth: z._default(z.boolean(), false),
  username: z._default(z.string(), ""),
  password: z._default(z.string(), ""),
  enabled: z._default(z.boolean(), true),
  triggers: z._default(z.array(z.string()), []),
});
const appBody = z.object({ name: z.string(), version: z.string(), region: z.enum(["us", "eu", "in"]) });

export interface ManagementApiServer {
  /** `{management_url}`. */
  url: string;
  /** Requests answered, by `METHOD kind` (`GET webhooks`, `POST webhooks`, `PUT webhooks`, …). */
  calls: Map<string, number>;
  /** The apps and their webhooks. */
  apps: Map<string, { name: string; region: string; webhooks: Map<string, SimulatedWebhook> }>;
  /** Where an app's event of `trigger` goes: its enabled webhooks subscribed to it. */
  deliveriesFor(appId: string, trigger: string): SimulatedWebhook[];
  close(): Promise<void>;
}

export interface ManagementApiServerOptions {
  key: string;
  secret: string;
  /** Apps that exist from the start (as if created by `POST /apps`). */
  appIds?: readonly string[];
  /** Accept `http://` webhook URLs (a local stack): the real platform requires HTTPS. @default false */
  allowHttp?: boolean;
  port?: number;
  /** Answer this status instead (tests: 429, 500), for the nth request (from 1). */
  faults?: (n: number) => number | undefined;
}

/**
 * Plays the platform's management API (spec sections 4 and 2.2, and the webhook paths its public
 * documentation gives, `shared/apps/management-api.ts`): `POST /apps`, and per app `GET`/`POST
 * /apps/{appId}/webhooks`, `PUT`/`DELETE /apps/{appId}/webhooks/{id}`, with headers `key` and
 * `secret`. The spec's limits: `id` and `name` over 50 characters refused (400), a non-HTTPS URL
 * refused unless `allowHttp`; 25 webhooks per app.
 */
export async function startManagementApi(options: ManagementApiServerOptions): Promise<ManagementApiServer> {
  const apps: ManagementApiServer["apps"] = new Map(
    (options.appIds ?? []).map((id) => [id, { name: id, region: "us", webhooks: new Map() }]),
  );
  const calls = new Map<string, number>();
  let requests = 0;
  let nextId = 1;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body?: unknown) =>
      res
        .writeHead(status, { "content-type": "application/json" })
        .end(body === undefined ? undefined : JSON.stringify(body));
    const refuse = (status: number, message: string) =>
      send(status, { error: { code: "ERR", message }, message });
    const url = new URL(req.url ?? "/", "http://platform");
    const match = /^\/apps(?:\/([^/]+)\/webhooks(?:\/([^/]+))?)?$/.exec(url.pathname);
    const kind = match?.[1] === undefined ? "apps" : "webhooks";
    const method = req.method ?? "GET";
    calls.set(`${method} ${kind}`, (calls.get(`${method} ${kind}`) ?? 0) + 1);
    const fault = options.faults?.(++requests);
    if (fault) return refuse(fault, "simulated");
    if (req.headers.key !== options.key || req.headers.secret !== options.secret)
      return refuse(401, "invalid key or secret");
    if (!match) return refuse(404, "not found");
    let body: unknown;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    } catch {
      return refuse(400, "body is not JSON");
    }
    if (kind === "apps") {
      if (method !== "POST") return refuse(405, "only POST /apps");
      const parsed = appBody.safeParse(body, ENGLISH);
      if (!parsed.success) return refuse(400, "name, version and region (us, eu, in) are required");
      const appId = `app${Date.now().toString(36)}${nextId++}`;
      apps.set(appId, { name: parsed.data.name, region: parsed.data.region, webhooks: new Map() });
      return send(200, { data: { appId, ...parsed.data } });
    }
    const app = apps.get(decodeURIComponent(match[1] ?? ""));
    if (!app) return refuse(404, "no such app");
    const webhookId = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    if (method === "GET" && webhookId === undefined) return send(200, { data: [...app.webhooks.values()] });
    if (method === "DELETE" && webhookId !== undefined) {
      if (!app.webhooks.delete(webhookId)) return refuse(404, "no such webhook");
      return send(200, { data: { success: true } });
    }
    if ((method === "POST" && webhookId === undefined) || (method === "PUT" && webhookId !== undefined)) {
      const parsed = webhookBody.safeParse(body, ENGLISH);
      if (!parsed.success) return refuse(400, "invalid webhook");
      const id = webhookId ?? parsed.data.id ?? `wh${nextId++}`;
      if (id.length > WEBHOOK_ID_MAX_LENGTH) return refuse(400, "id is longer than 50 characters");
      if (parsed.data.name.length > WEBHOOK_ID_MAX_LENGTH)
        return refuse(400, "name is longer than 50 characters");
      if (
        !/^https:\/\//.test(parsed.data.webhookURL) &&
        !(options.allowHttp && /^http:\/\//.test(parsed.data.webhookURL))
      )
        return refuse(400, "webhookURL must be HTTPS");
      if (method === "PUT" && !app.webhooks.has(id)) return refuse(404, "no such webhook");
      if (method === "POST" && app.webhooks.has(id)) return refuse(409, "a webhook with this id exists");
      if (method === "POST" && app.webhooks.size >= MAX_WEBHOOKS_PER_APP)
        return refuse(400, "25 webhooks at most");
      const webhook: SimulatedWebhook = { ...parsed.data, id };
      app.webhooks.set(id, webhook);
      return send(200, { data: webhook });
    }
    return refuse(405, "method not allowed");
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    apps,
    deliveriesFor: (appId, trigger) =>
      [...(apps.get(appId)?.webhooks.values() ?? [])].filter(
        (w) => w.enabled && w.triggers.includes(trigger),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
