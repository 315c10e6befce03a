import { ENGLISH } from "@webhook-backend/stream/parse";
import * as z from "zod/mini";

/**
 * How the platform's APIs answer, read the same way by every client of them (the management API,
 * the data import API): how long a 429 or 5xx asks to wait, an answer's JSON, and a short reason
 * from an error answer. The spec shows none of it (section 7: error bodies and codes "not shown");
 * each client says beside its paths what it assumes.
 */

/**
 * How long a 429 or 5xx asks to wait: `Retry-After` (seconds or an HTTP date), capped at a minute,
 * else exponential backoff with jitter from `baseMs` (capped at `capMs`).
 *
 * @example retryDelay(new Response(null, { status: 429, headers: { "retry-after": "2" } }), 0) // 2000
 */
export function retryDelay(
  response: Response | undefined,
  attempt: number,
  { baseMs = 200, capMs = 20_000 }: { baseMs?: number; capMs?: number } = {},
  now: () => number = Date.now,
): number {
  const header = response?.headers.get("retry-after") ?? null;
  const seconds = header === null ? Number.NaN : Number(header);
  if (Number.isFinite(seconds)) return Math.min(60_000, Math.max(0, seconds * 1000));
  const date = header === null ? Number.NaN : Date.parse(header);
  if (Number.isFinite(date)) return Math.min(60_000, Math.max(0, date - now()));
  return Math.min(capMs, baseMs * 2 ** attempt) * (0.5 + Math.random() / 2);
}

/** An answer's text as JSON when it is JSON, the text itself when not, `undefined` when empty. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const errorBodySchema = z.looseObject({ message: z.optional(z.string()), error: z.optional(z.unknown()) });
const codedErrorSchema = z.looseObject({ code: z.optional(z.string()), message: z.optional(z.string()) });

/**
 * An error value as a short text: `code: message` of `{"code", "message"}`, a string as it is,
 * anything else as JSON; `""` for none.
 *
 * @example errorText({ code: "ERR_UID_ALREADY_EXISTS", message: "exists" }) // "ERR_UID_ALREADY_EXISTS: exists"
 */
export function errorText(error: unknown): string {
  if (error === undefined || error === null) return "";
  if (typeof error === "string") return error.slice(0, 200);
  const coded = codedErrorSchema.safeParse(error, ENGLISH);
  if (coded.success && (coded.data.code || coded.data.message))
    return [coded.data.code, coded.data.message].filter(Boolean).join(": ").slice(0, 200);
  return JSON.stringify(error).slice(0, 200);
}

/**
 * A short reason from an error body (its `message`, else its `error` as `errorText` gives it),
 * never a header: `""` when the body says nothing or is not JSON (a proxy's HTML page says nothing
 * useful).
 *
 * @example errorReason({ error: { code: "ERR_TOO_MANY_REQUESTS" } }) // "ERR_TOO_MANY_REQUESTS"
 */
export function errorReason(body: unknown): string {
  if (typeof body === "string") return "";
  const parsed = errorBodySchema.safeParse(body, ENGLISH);
  if (!parsed.success) return "";
  return (parsed.data.message ?? errorText(parsed.data.error)).slice(0, 200);
}

/** A short reason from an error answer, as `: <reason>` to follow its status (`""` when it says nothing). */
export async function errorDetail(response: Response): Promise<string> {
  const reason = errorReason(parseJsonText(await response.text().catch(() => "")));
  return reason ? `: ${reason}` : "";
}
