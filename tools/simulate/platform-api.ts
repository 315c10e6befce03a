import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ExpectedApp } from "./generator";
import { type ImportDouble, importDouble, importUrlOf } from "./import-api";

/** The API key the simulated platform accepts for an app (the simulator's own, not a secret). */
export function simulatedApiKey(appId: string): string {
  return `sim-key-${appId}`;
}

export interface PlatformApi {
  /** `{base_url}` of an app: `<url>/apps/<appId>/v3` (the real host carries the app id). */
  baseUrl(appId: string): string;
  /** `{import_url}` of an app: `<url>/apps/<appId>/v3.0/data_import` (the data import double). */
  importUrl(appId: string): string;
  /** The data import double the app hosts serve (`./import-api.ts`). */
  imports: ImportDouble;
  close(): Promise<void>;
}

/**
 * Plays the platform's chat API for the simulated apps: `GET /apps/<appId>/v3/users` with the
 * `apiKey` header, `perPage` (up to 1000) and `page` from 1, answering `{"data": [...], "meta":
 * {"pagination": {total, count, per_page, current_page, total_pages}}}` with each user's status as
 * the simulated history leaves it. `faults` makes it answer a status instead (tests: 429, 500…).
 * The app hosts take the data import too (`POST /apps/<appId>/v3.0/data_import/users`, the
 * double of `./import-api.ts`, with the same API keys).
 */
export async function startPlatformApi(
  apps: ReadonlyMap<string, Pick<ExpectedApp, "users" | "online">>,
  options: { port?: number; faults?: (page: number) => number | undefined } = {},
): Promise<PlatformApi> {
  // The same app hosts take the data import (spec section 4: `/v3.0/data_import/users` under the app host).
  const imports = importDouble({
    apiKeys: new Map([...apps.keys()].map((app) => [app, simulatedApiKey(app)])),
  });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://platform");
    if (url.pathname.includes("/v3.0/data_import/")) return void imports.handle(req, res);
    const match = /^\/apps\/([^/]+)\/v3\/users$/.exec(url.pathname);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    if (!match || req.method !== "GET") return send(404, { error: { code: "ERR_NOT_FOUND" } });
    const appId = decodeURIComponent(match[1] ?? "");
    const app = apps.get(appId);
    if (!app || req.headers.apikey !== simulatedApiKey(appId))
      return send(401, { error: { code: "AUTH_ERR_APIKEY_NOT_FOUND" } });
    const perPage = Math.min(1000, Math.max(1, Number(url.searchParams.get("perPage") ?? 100)));
    const page = Math.max(1, Number(url.searchParams.get("page") ?? 1));
    const fault = options.faults?.(page);
    if (fault)
      return send(fault, { error: { code: "SIMULATED" } }, fault === 429 ? { "retry-after": "0" } : {});
    const users = app.users.map((u) => ({
      uid: u.uid,
      name: u.name,
      status: app.online.has(u.uid) ? "available" : "offline",
      role: "default",
      lastActiveAt: 1_763_000_000,
    }));
    const data = users.slice((page - 1) * perPage, page * perPage);
    send(200, {
      data,
      meta: {
        pagination: {
          total: users.length,
          count: data.length,
          per_page: perPage,
          current_page: page,
          total_pages: Math.max(1, Math.ceil(users.length / perPage)),
        },
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: (appId) => `${url}/apps/${encodeURIComponent(appId)}/v3`,
    importUrl: (appId) => importUrlOf(url, appId),
    imports,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
