import { ENGLISH } from "@webhook-backend/stream/parse";
import * as z from "zod/mini";
import {
  ManagementAuthError,
  ManagementRequestError,
  ManagementUnavailableError,
  UnknownAppError,
} from "../platform/errors";
import { errorDetail, parseJsonText, retryDelay } from "../platform/http-answers";

/**
 * The platform's management API (spec sections 1, 2.2, 4, 5), in this one module. What the spec
 * shows: `POST {management_url}/apps` with `name`, `version`, `region`; headers `key` and `secret`
 * on every request; the webhook resource's fields (`id` and `name` ≤ 50 characters, `webhookURL`
 * over HTTPS, `useBasicAuth`, `username`, `password`, `enabled`). What it leaves "not shown", and
 * what this adapter assumes (from the platform's public documentation as its own QA suite
 * transcribes it), beside each path below:
 * - the webhook paths and methods (list, create, update, delete) and the `triggers` array;
 * - every response body: a list is read as a JSON array or `{"data": [...]}`, a webhook as the
 *   object or `{"data": {...}}`; fields beyond the spec's are kept, not required;
 * - whether a read returns the password: not relied on (the username tells which credential a
 *   webhook delivers with: each credential has its own);
 * - error bodies and status codes (spec section 7): 401/403 is taken as bad key/secret, 404 as an
 *   unknown app, other 4xx as a refused field, 429 and 5xx as "retry later";
 * - rate limits (section 8): not shown; 429 and 5xx are retried with backoff (`Retry-After` first).
 */

/** A webhook as the management API returns it. */
export const platformWebhookSchema = z.looseObject({
  id: z.string(),
  name: z.optional(z.string()),
  webhookURL: z.optional(z.string()),
  useBasicAuth: z.optional(z.boolean()),
  username: z.optional(z.string()),
  password: z.optional(z.string()),
  enabled: z.optional(z.boolean()),
  /** Not in the spec's table; in the platform's public documentation. */
  triggers: z.optional(z.array(z.string())),
});
export type PlatformWebhook = z.infer<typeof platformWebhookSchema>;

/** What we write: every field of the spec's resource, and the triggers. */
export interface WebhookSettings {
  id: string;
  name: string;
  webhookURL: string;
  useBasicAuth: true;
  username: string;
  password: string;
  enabled: boolean;
  triggers: string[];
}

/** The spec's limit on a webhook's `id` and `name`. */
export const WEBHOOK_ID_MAX_LENGTH = 50;

const listSchema = z.union([z.array(z.unknown()), z.looseObject({ data: z.array(z.unknown()) })]);

export interface ManagementApiOptions {
  /** `{management_url}`. */
  url: string;
  key: string;
  secret: string;
  /** Retries of a 429, a 5xx, a timeout or a network fault. @default 5 */
  maxRetries?: number;
  /** One request's time limit, ms. @default 10_000 */
  timeoutMs?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

export interface ManagementApi {
  /** `GET {management_url}/apps/{appId}/webhooks` (path: not shown in the spec). */
  listWebhooks(appId: string): Promise<PlatformWebhook[]>;
  /** `POST {management_url}/apps/{appId}/webhooks` (path: not shown in the spec). */
  createWebhook(appId: string, settings: WebhookSettings): Promise<void>;
  /** `PUT {management_url}/apps/{appId}/webhooks/{id}` (path: not shown in the spec). */
  updateWebhook(appId: string, settings: WebhookSettings): Promise<void>;
  /** `DELETE {management_url}/apps/{appId}/webhooks/{id}` (path: not shown in the spec). */
  deleteWebhook(appId: string, webhookId: string): Promise<void>;
  /** `POST {management_url}/apps` (spec section 4, endpoint 1; response body: not shown). */
  createApp(app: { name: string; version: string; region: "us" | "eu" | "in" }): Promise<unknown>;
}

/**
 * The management API over `fetch`, with the key and secret in headers (never in a URL, an error
 * or a log line), backing off on throttling and errors.
 *
 * @example
 * const api = managementApi({ url, key, secret });
 * const hooks = await api.listWebhooks("app1");
 */
export function managementApi(options: ManagementApiOptions): ManagementApi {
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const maxRetries = options.maxRetries ?? 5;
  const base = options.url.replace(/\/+$/, "");
  const appPath = (appId: string) => `/apps/${encodeURIComponent(appId)}/webhooks`;

  const call = async (method: string, path: string, appId: string | undefined, body?: unknown) => {
    let last = "";
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      let response: Response | undefined;
      try {
        response = await doFetch(`${base}${path}`, {
          method,
          headers: {
            key: options.key,
            secret: options.secret,
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        });
      } catch (error) {
        last = error instanceof Error && error.name === "TimeoutError" ? "timed out" : "network error";
      }
      if (response) {
        if (response.ok) return response.status === 204 ? undefined : parseJsonText(await response.text());
        const detail = await errorDetail(response);
        if (response.status === 401 || response.status === 403)
          throw new ManagementAuthError(
            `the management API refused the key and secret (${response.status}): check PLATFORM_MANAGEMENT_KEY/SECRET or the management secret`,
          );
        if (response.status === 404 && appId !== undefined)
          throw new UnknownAppError(`the platform does not know app ${appId} (404${detail})`);
        if (response.status !== 429 && response.status < 500)
          throw new ManagementRequestError(
            `${method} ${path}: the platform refused it (${response.status}${detail})`,
          );
        last = `${response.status}${detail}`;
      }
      if (attempt < maxRetries) await sleep(retryDelay(response, attempt));
    }
    throw new ManagementUnavailableError(`${method} ${path}: ${last} after ${maxRetries + 1} attempts`);
  };

  return {
    listWebhooks: async (appId) => {
      const parsed = listSchema.safeParse(await call("GET", appPath(appId), appId), ENGLISH);
      if (!parsed.success) throw new ManagementRequestError(`GET ${appPath(appId)}: not a list of webhooks`);
      const items = Array.isArray(parsed.data) ? parsed.data : parsed.data.data;
      return items.flatMap((item) => {
        const hook = platformWebhookSchema.safeParse(item, ENGLISH);
        return hook.success ? [hook.data] : [];
      });
    },
    createWebhook: async (appId, settings) => {
      await call("POST", appPath(appId), appId, settings);
    },
    updateWebhook: async (appId, settings) => {
      await call("PUT", `${appPath(appId)}/${encodeURIComponent(settings.id)}`, appId, settings);
    },
    deleteWebhook: async (appId, webhookId) => {
      await call("DELETE", `${appPath(appId)}/${encodeURIComponent(webhookId)}`, appId);
    },
    createApp: (app) => call("POST", "/apps", undefined, app),
  };
}
