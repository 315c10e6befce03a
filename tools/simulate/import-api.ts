import http from "node:http";
import type { AddressInfo } from "node:net";
import { ENGLISH } from "@webhook-backend/stream/parse";
import * as z from "zod/mini";

/**
 * Plays the platform's data import API (spec section 4, endpoint 3) for the simulated apps:
 * `POST /apps/<appId>/v3.0/data_import/users` with the `apiKey` header and
 * `{"users": {<uid>: {"uid", "name", …}}}`. What the spec shows is played as it says; what it
 * leaves "not shown" is played as `shared/imports/import-api.ts` assumes it, each an ASSUMPTION:
 * - ASSUMPTION (batch size, section 8): more than `batchLimit` (50) users in a request is refused
 *   whole: 400 `ERR_TOO_MANY_ENTITIES`;
 * - ASSUMPTION (rate limit, section 8): more than `perMinute` (60) requests in a minute of the
 *   double's clock are answered 429 `ERR_TOO_MANY_REQUESTS` with `Retry-After`;
 * - ASSUMPTION (response, section 4): 200 `{"data": {<uid>: {"success": true}}}`, or
 *   `{"success": false, "error": {"code", "message"}}` for a user refused: a key that is not its
 *   uid (`ERR_UID_MISMATCH`), no name (`ERR_NAME_REQUIRED`), a uid the app has already
 *   (`ERR_UID_ALREADY_EXISTS`), or what `refuse` says;
 * - ASSUMPTION (errors, section 7): a wrong key is 401 `AUTH_ERR_APIKEY_NOT_FOUND`, an unknown
 *   path 404, a body that is not `{"users": {…}}` 400.
 * `faults` answers the nth request (from 1) with a status instead (tests: 429, 500…), before
 * anything of it is taken.
 */

/** What the double keeps of an app's users. */
export interface ImportedOnPlatform {
  uid: string;
  name: string;
  [field: string]: unknown;
}

export interface ImportApiDouble {
  /** `{import_url}` of an app: `<url>/apps/<appId>/v3.0/data_import` (the real host carries the app id). */
  importUrl(appId: string): string;
  /** The users each app holds (created by an import). */
  users: Map<string, Map<string, ImportedOnPlatform>>;
  /** How many times each uid reached an app in a request the double took (not a fault, not throttled). */
  received: Map<string, Map<string, number>>;
  /** Requests answered, by status. */
  answers: Map<number, number>;
  close(): Promise<void>;
}

export interface ImportApiDoubleOptions {
  /** The API key each app accepts; an app not here is unknown (401, as the platform's hosts answer). */
  apiKeys: ReadonlyMap<string, string>;
  /** ASSUMPTION: users a request at most. @default 50 */
  batchLimit?: number;
  /** ASSUMPTION: requests a minute at most. @default 60 */
  perMinute?: number;
  /** The double's clock (ms). */
  now?: () => number;
  /** Answer the nth request (from 1) with this status instead. */
  faults?: (n: number) => number | undefined;
  /** Refuse a user with this reason (`ERR_…` code). */
  refuse?: (appId: string, user: ImportedOnPlatform) => string | undefined;
  port?: number;
}

const usersBody = z.object({ users: z.record(z.string(), z.unknown()) });
const userEntry = z.looseObject({ uid: z.optional(z.string()), name: z.optional(z.string()) });

/** The double's state and its request handler (served alone, or on the simulated app hosts' server). */
export interface ImportDouble extends Omit<ImportApiDouble, "importUrl" | "close"> {
  handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;
}

/**
 * The data import double's state and handler, for a server of its own (`startImportApi`) or the
 * simulated platform's (`startPlatformApi`, which serves the app hosts' other paths).
 *
 * @example const double = importDouble({ apiKeys }); http.createServer(double.handle)
 */
export function importDouble(options: ImportApiDoubleOptions): ImportDouble {
  const users: ImportApiDouble["users"] = new Map();
  const received: ImportApiDouble["received"] = new Map();
  const answers = new Map<number, number>();
  const now = options.now ?? Date.now;
  const limit = options.batchLimit ?? 50;
  const perMinute = options.perMinute ?? 60;
  const window: number[] = [];
  let requests = 0;
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      answers.set(status, (answers.get(status) ?? 0) + 1);
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    };
    const refuse = (status: number, code: string, message: string, headers?: Record<string, string>) =>
      send(status, { error: { code, message } }, headers);
    const fault = options.faults?.(++requests);
    if (fault)
      return refuse(fault, "SIMULATED", "simulated fault", fault === 429 ? { "retry-after": "1" } : {});
    const appId = decodeURIComponent(/^\/apps\/([^/]+)\//.exec(req.url ?? "")?.[1] ?? "");
    const match = /^\/apps\/[^/]+\/v3\.0\/data_import\/([a-z]+)$/.exec(req.url ?? "");
    const key = options.apiKeys.get(appId);
    if (!key || req.headers.apikey !== key)
      return refuse(401, "AUTH_ERR_APIKEY_NOT_FOUND", "the API key is not valid for this app");
    if (!match || req.method !== "POST" || match[1] !== "users")
      return refuse(404, "ERR_NOT_FOUND", "no such import path (the double plays users only)");
    const at = now();
    while (window.length && (window[0] ?? 0) <= at - 60_000) window.shift();
    if (window.length >= perMinute) {
      const wait = Math.max(1, Math.ceil(((window[0] ?? at) + 60_000 - at) / 1000));
      return refuse(429, "ERR_TOO_MANY_REQUESTS", "rate limit exceeded", { "retry-after": String(wait) });
    }
    window.push(at);
    let body: z.infer<typeof usersBody>;
    try {
      body = usersBody.parse(JSON.parse(Buffer.concat(chunks).toString("utf8")));
    } catch {
      return refuse(400, "ERR_BAD_REQUEST", 'the body must be {"users": {<uid>: {…}}}');
    }
    const entries = Object.entries(body.users);
    if (entries.length > limit)
      return refuse(400, "ERR_TOO_MANY_ENTITIES", `at most ${limit} users a request`);
    const app = users.get(appId) ?? new Map<string, ImportedOnPlatform>();
    users.set(appId, app);
    const counts = received.get(appId) ?? new Map<string, number>();
    received.set(appId, counts);
    const data: Record<string, unknown> = {};
    for (const [uid, value] of entries) {
      counts.set(uid, (counts.get(uid) ?? 0) + 1);
      const user = userEntry.safeParse(value, ENGLISH);
      const fail = (code: string, message: string) => {
        data[uid] = { success: false, error: { code, message } };
      };
      if (!user.success || user.data.uid !== uid) fail("ERR_UID_MISMATCH", "the key is not the user's uid");
      else if (!user.data.name) fail("ERR_NAME_REQUIRED", "a user needs a name");
      else if (app.has(uid)) fail("ERR_UID_ALREADY_EXISTS", `a user with uid ${uid} exists`);
      else {
        const entry = { ...user.data, uid, name: user.data.name };
        const reason = options.refuse?.(appId, entry);
        if (reason) fail(reason, "refused by the simulation");
        else {
          app.set(uid, entry);
          data[uid] = { success: true };
        }
      }
    }
    send(200, { data });
  };
  return { handle, users, received, answers };
}

/**
 * Starts the data import double on 127.0.0.1, on a server of its own.
 *
 * @example const platform = await startImportApi({ apiKeys: new Map([["app1", "sim-key-app1"]]) }); platform.importUrl("app1")
 */
export async function startImportApi(options: ImportApiDoubleOptions): Promise<ImportApiDouble> {
  const double = importDouble(options);
  const server = http.createServer((req, res) => void double.handle(req, res));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    importUrl: (appId) => importUrlOf(url, appId),
    users: double.users,
    received: double.received,
    answers: double.answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `{import_url}` of an app on a simulated platform at `url`: the app host's `/v3.0/data_import`. */
export function importUrlOf(url: string, appId: string): string {
  return `${url}/apps/${encodeURIComponent(appId)}/v3.0/data_import`;
}
