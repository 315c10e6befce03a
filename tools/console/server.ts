import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ipaddr from "ipaddr.js";
import { UsageError } from "../cli/program";
import { type ConsoleContext, errorResponse, handleApi } from "./api";

/**
 * The console's HTTP server: the page and its assets (from the package: no CDN, it works offline)
 * and the JSON endpoints (`api.ts`). It listens on loopback only, and answers only requests whose
 * Host (and Origin, when the browser sends one) is its own address, so that no other site, and no
 * name rebound to 127.0.0.1, can read the tables through it.
 */

const PAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "page");
const CHART_JS = join(dirname(createRequire(import.meta.url).resolve("chart.js")), "chart.umd.min.js");

/** The page's scripts: ES modules, app.js (the views' switch and the refresh loop) importing the rest. */
export const PAGE_SCRIPTS = [
  "app.js",
  "state.js",
  "format.js",
  "widgets.js",
  "apps.js",
  "flow.js",
  "events.js",
  "activity.js",
  "day.js",
  "now.js",
];

const ASSETS: Record<string, { file: string; type: string }> = {
  "/": { file: join(PAGE_DIR, "index.html"), type: "text/html; charset=utf-8" },
  ...Object.fromEntries(
    PAGE_SCRIPTS.map((name) => [
      `/assets/${name}`,
      { file: join(PAGE_DIR, name), type: "text/javascript; charset=utf-8" },
    ]),
  ),
  "/assets/style.css": { file: join(PAGE_DIR, "style.css"), type: "text/css; charset=utf-8" },
  "/assets/chart.umd.min.js": { file: CHART_JS, type: "text/javascript; charset=utf-8" },
};

/** What every answer carries: nothing framed, sniffed, referred or cached; scripts from here only. */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/**
 * Whether `host` is a loopback address (or `localhost`): the only addresses the console binds to.
 *
 * @example isLoopback("127.0.0.1") // true
 * @example isLoopback("0.0.0.0") // false
 */
export function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.process(bare);
  return address.range() === "loopback";
}

/** A host as it appears in a Host header or URL: an IPv6 address in brackets. */
function hostPart(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host.toLowerCase();
}

/** The Host header values that name this console: the address it listens on and the loopback names, at its port. */
function ownHosts(bound: string, port: number): string[] {
  return [...new Set([hostPart(bound), "127.0.0.1", "localhost", "[::1]"])].map((h) => `${h}:${port}`);
}

/**
 * The header every API request carries (the page's script sends it). A cross-site page can make a
 * browser send a plain GET without an Origin (an image, a link), which it cannot read but which,
 * against a deployed stack, is a billed read; it cannot add a header without a CORS preflight,
 * which the console never grants.
 */
export const API_HEADER = "x-webhook-console";

/**
 * Why a request is refused, if it is: a Host that is not the console's own (a DNS-rebinding page
 * reaching 127.0.0.1 under its own name), an Origin that is not the console's (another site's
 * script), an API request without the console's header (another site's image or link), or a
 * write without an Origin or without a JSON body type (a form posted cross-site).
 */
export function refusal(
  method: string,
  path: string,
  headers: IncomingHttpHeaders,
  own: { host: string; port: number },
): { status: number; error: string } | undefined {
  const hosts = ownHosts(own.host, own.port);
  if (!headers.host || !hosts.includes(headers.host.toLowerCase()))
    return { status: 421, error: `host ${headers.host ?? "(none)"} is not this console's (${hosts[0]})` };
  const origin = headers.origin;
  if (origin !== undefined && !hosts.map((h) => `http://${h}`).includes(origin.toLowerCase()))
    return { status: 403, error: `origin ${origin} is not this console's` };
  if (path.startsWith("/api/") && headers[API_HEADER] !== "1")
    return { status: 403, error: `an API request carries the console's header (${API_HEADER}: 1)` };
  if (method !== "GET" && method !== "HEAD") {
    if (origin === undefined) return { status: 403, error: "a write needs the console's own Origin" };
    if (!headers["content-type"]?.startsWith("application/json"))
      return { status: 415, error: "a write is sent as application/json" };
  }
  return undefined;
}

export interface ConsoleServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface ConsoleOptions {
  /** @default "127.0.0.1" — anything but loopback is refused. */
  host?: string;
  /** 0: a free port. */
  port: number;
  /** When `port` is taken, listen on a free one (the URL says which) instead of failing. */
  anyPortIfTaken?: boolean;
  context: ConsoleContext;
  /** Where an endpoint's unexpected failure is told (the 500's message is in its answer too). */
  onError?: (error: unknown) => void;
}

/** Starts the console; refuses (UsageError) a host that is not loopback. */
export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const host = options.host ?? "127.0.0.1";
  if (!isLoopback(host))
    throw new UsageError(
      `the console serves loopback only (127.0.0.1, ::1 or localhost), not ${host}: it reads your tables`,
    );
  let port = options.port;
  const server: Server = createServer((request, response) => {
    const send = (status: number, body: string | Buffer, type: string) => {
      response.writeHead(status, { ...SECURITY_HEADERS, "content-type": type });
      response.end(body);
    };
    const json = (status: number, body: unknown) =>
      send(status, JSON.stringify(body), "application/json; charset=utf-8");
    const method = request.method ?? "GET";
    const url = new URL(request.url ?? "/", "http://console");
    const refused = refusal(method, url.pathname, request.headers, { host, port });
    if (refused) {
      request.resume();
      json(refused.status, { error: refused.error });
      return;
    }
    const asset = ASSETS[url.pathname];
    if (asset && (method === "GET" || method === "HEAD")) {
      send(200, method === "HEAD" ? "" : readFileSync(asset.file), asset.type);
      return;
    }
    if (!url.pathname.startsWith("/api/")) {
      json(404, { error: `no such page: ${url.pathname}` });
      return;
    }
    // The body of a write is not read: resend takes its id from the path.
    request.resume();
    handleApi(options.context, method, url.pathname, url.searchParams).then(
      (r) => json(r.status, r.body),
      (error: unknown) => {
        const r = errorResponse(error);
        if (r.status >= 500) options.onError?.(error);
        json(r.status, r.body);
      },
    );
  });
  const listen = (at: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(at, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(options.port).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EADDRINUSE" || !options.anyPortIfTaken) throw error;
    return listen(0);
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${hostPart(host)}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
