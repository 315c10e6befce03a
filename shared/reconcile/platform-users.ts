import { BackendError } from "@webhook-backend/stream/errors";
import { ENGLISH } from "@webhook-backend/stream/parse";
import * as z from "zod/mini";

/**
 * The platform's user listing (`GET {base_url}/users`, header `apiKey`; `perPage` up to 1000,
 * `page` from 1). Parsed defensively: the platform's docs disagree on details, so every field but
 * the uid is optional and unknown fields are kept out of the way.
 */
const listedUserSchema = z.looseObject({
  uid: z.string().check(z.minLength(1)),
  name: z.optional(z.string()),
  avatar: z.optional(z.string()),
  status: z.optional(z.string()),
  role: z.optional(z.string()),
  lastActiveAt: z.optional(z.number()),
});
export type ListedUser = z.infer<typeof listedUserSchema>;

const listingPageSchema = z.looseObject({
  data: z.array(z.unknown()),
  meta: z.optional(
    z.looseObject({
      pagination: z.optional(
        z.looseObject({
          total: z.optional(z.number()),
          count: z.optional(z.number()),
          per_page: z.optional(z.number()),
          current_page: z.optional(z.number()),
          total_pages: z.optional(z.number()),
        }),
      ),
    }),
  ),
});

/** The platform refused the API key (401/403): retrying will not help. */
export class PlatformAuthError extends BackendError {
  override name = "PlatformAuthError";
  readonly retryable = false;
}

/** The listing could not be read to the end (after retries): what was read is partial. */
export class PlatformListingError extends BackendError {
  override name = "PlatformListingError";
  readonly retryable = true;
}

export interface UserListing {
  users: ListedUser[];
  /** Every page was read: a user absent from it is not online on the platform. */
  complete: boolean;
  pages: number;
  /** Why it is not complete. */
  error?: string;
}

export interface ListingOptions {
  /** `{base_url}`: the app's chat API host with `/v3` (or a stand-in's). */
  baseUrl: string;
  apiKey: string;
  appId: string;
  /** @default 1000 (the platform's maximum) */
  perPage?: number;
  /** @default 5 retries of a 429 or 5xx answer */
  maxRetries?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

/** The platform's chat API for an app: a host that carries the app id and the region. */
export function platformBaseUrl(appId: string, region: "us" | "eu" | "in"): string {
  return `https://${encodeURIComponent(appId)}.api-${region}.cometchat.io/v3`;
}

/** How long a 429 or 5xx asks to wait: `Retry-After` (seconds or a date), else exponential backoff. */
function retryDelay(response: Response, attempt: number): number {
  const header = response.headers.get("retry-after");
  const seconds = header === null ? Number.NaN : Number(header);
  if (Number.isFinite(seconds)) return Math.min(60_000, Math.max(0, seconds * 1000));
  const date = header === null ? Number.NaN : Date.parse(header);
  if (Number.isFinite(date)) return Math.min(60_000, Math.max(0, date - Date.now()));
  return Math.min(30_000, 500 * 2 ** attempt);
}

/**
 * Reads every page of the user listing. A 429 or 5xx is retried with backoff (honouring
 * `Retry-After`); a 401 or 403 throws a `PlatformAuthError` naming the app; any other failure
 * stops the listing and returns what was read, marked incomplete.
 *
 * @example const listing = await listPlatformUsers({ baseUrl: platformBaseUrl("app1", "eu"), apiKey, appId: "app1" })
 */
export async function listPlatformUsers(options: ListingOptions): Promise<UserListing> {
  const fetcher = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const perPage = options.perPage ?? 1000;
  const users: ListedUser[] = [];
  for (let page = 1; ; page++) {
    const url = `${options.baseUrl.replace(/\/$/, "")}/users?perPage=${perPage}&page=${page}`;
    let response: Response | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        response = await fetcher(url, { headers: { apiKey: options.apiKey, accept: "application/json" } });
      } catch (error) {
        if (attempt >= (options.maxRetries ?? 5))
          return {
            users,
            complete: false,
            pages: page - 1,
            error: `page ${page}: ${(error as Error).message}`,
          };
        await sleep(Math.min(30_000, 500 * 2 ** attempt));
        continue;
      }
      if (response.status !== 429 && response.status < 500) break;
      if (attempt >= (options.maxRetries ?? 5))
        return { users, complete: false, pages: page - 1, error: `page ${page}: HTTP ${response.status}` };
      await sleep(retryDelay(response, attempt));
    }
    if (response.status === 401 || response.status === 403)
      throw new PlatformAuthError(
        `the platform refused the API key of app ${options.appId} (HTTP ${response.status}): check --api-key or the API-keys secret`,
      );
    if (!response.ok)
      return { users, complete: false, pages: page - 1, error: `page ${page}: HTTP ${response.status}` };
    const parsed = listingPageSchema.safeParse(await response.json().catch(() => undefined), ENGLISH);
    if (!parsed.success)
      return { users, complete: false, pages: page - 1, error: `page ${page}: not a user listing` };
    for (const entry of parsed.data.data) {
      const user = listedUserSchema.safeParse(entry, ENGLISH);
      if (user.success) users.push(user.data);
    }
    const pagination = parsed.data.meta?.pagination;
    const totalPages = pagination?.total_pages;
    // The last page: as the pagination says, or (without one) a page shorter than asked.
    const last = totalPages !== undefined ? page >= totalPages : parsed.data.data.length < perPage;
    if (last) return { users, complete: true, pages: page };
  }
}
