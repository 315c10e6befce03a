import { ENGLISH } from "@webhook-backend/stream/parse";
import * as z from "zod/mini";
import { ImportAuthError, ImportPathError, ImportUnavailableError } from "../platform/errors";
import { errorReason, errorText, parseJsonText, retryDelay } from "../platform/http-answers";
import type { ReadyImportKind } from "./kinds";

/**
 * The platform's data import API (spec sections 1, 4 and 5), in this one module. What the spec
 * shows: `POST {import_url}/users`, header `apiKey`, body `{"users": {<uid>: {"uid", "name"}}}`;
 * `{import_url}` is the app's host followed by `/v3.0/data_import`. What it leaves "not shown",
 * and what this adapter assumes (from the platform's public documentation), beside each:
 * - the batch size (section 8: "maximum batch sizes for import: not shown"): `IMPORT_BATCH_SIZE`,
 *   50 entities a request, as the public documentation states; configurable (`--batch-size`);
 * - the rate limit (section 8: not shown): `IMPORT_REQUESTS_PER_MINUTE`, 60 requests a minute, as
 *   the public documentation states; the client paces itself to it (configurable, `--per-minute`),
 *   and a 429 is retried all the same, `Retry-After` first;
 * - the response body (section 4: not shown): per entity, `{"data": {<id>: {"success": true}}}`
 *   or `{"success": false, "error": …}` as the public documentation describes it; an id the
 *   answer does not name is not confirmed (sent again by a re-run); a 2xx without per-entity
 *   results confirms the whole batch;
 * - an entity the platform has already (a re-run after a crash between the platform's answer and
 *   the backend's record): refused with a code in `ALREADY_EXISTS_CODES`, taken as "the platform
 *   has it", never as a refusal;
 * - error bodies and status codes (section 7: not shown): 401/403 is a refused API key, 404 a
 *   wrong address or unknown app, 429 and 5xx (and a timeout or network fault) "retry later",
 *   any other 4xx a refusal of the request: the batch is halved until each refusal names its
 *   entity (a refusal of one entity is that entity's, with the answer's reason).
 */

/** Entities a request (an assumption: the platform's public documentation says 50; the spec: not shown). */
export const IMPORT_BATCH_SIZE = 50;

/** Requests a minute (an assumption: the platform's public documentation says 60; the spec: not shown). */
export const IMPORT_REQUESTS_PER_MINUTE = 60;

/** The error codes that say the platform has the entity already (an assumption: the spec shows no codes). */
export const ALREADY_EXISTS_CODES: readonly string[] = [
  "ERR_UID_ALREADY_EXISTS",
  "ERR_GUID_ALREADY_EXISTS",
  "ERR_ALREADY_EXISTS",
];

/** What became of one entity of a batch. */
export type EntityOutcome =
  | { id: string; result: "imported" }
  | { id: string; result: "existed"; reason: string }
  | { id: string; result: "refused"; reason: string };

export interface ImportApiOptions {
  /** `{import_url}`: the app's host with `/v3.0/data_import` (or a stand-in's). */
  url: string;
  apiKey: string;
  /** Retries of a 429, a 5xx, a timeout or a network fault. @default 8 */
  maxRetries?: number;
  /** One request's time limit, ms. @default 30_000 */
  timeoutMs?: number;
  /** Requests started a minute at most. @default IMPORT_REQUESTS_PER_MINUTE */
  perMinute?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export interface ImportApi {
  /** Sends a batch of a kind (at most the batch size) and says what became of each entity. */
  send<T extends { [key: string]: unknown }>(
    kind: ReadyImportKind<T>,
    entries: readonly T[],
  ): Promise<EntityOutcome[]>;
  /** Requests sent so far (every attempt). */
  readonly requests: number;
}

const resultSchema = z.looseObject({ success: z.optional(z.boolean()), error: z.optional(z.unknown()) });
const answerSchema = z.looseObject({ data: z.record(z.string(), z.unknown()) });

/** The code of an entity's error (`{"code": …}`, or the error itself when it is a string). */
function errorCode(error: unknown): string | undefined {
  if (typeof error === "string") return error;
  const parsed = z.looseObject({ code: z.optional(z.string()) }).safeParse(error, ENGLISH);
  return parsed.success ? parsed.data.code : undefined;
}

/** What the answer says of each id sent (see the module's assumptions). */
export function outcomesOf(ids: readonly string[], body: unknown): EntityOutcome[] {
  const answer = answerSchema.safeParse(body, ENGLISH);
  if (!answer.success) return ids.map((id) => ({ id, result: "imported" }));
  return ids.map((id): EntityOutcome => {
    const result = resultSchema.safeParse(answer.data.data[id], ENGLISH);
    if (!result.success) return { id, result: "refused", reason: "the platform's answer does not name it" };
    if (result.data.success !== false) return { id, result: "imported" };
    const code = errorCode(result.data.error);
    const reason = errorText(result.data.error) || "refused without a reason";
    return code && ALREADY_EXISTS_CODES.includes(code)
      ? { id, result: "existed", reason }
      : { id, result: "refused", reason };
  });
}

/**
 * The data import API over `fetch`: the `apiKey` in a header (never in a URL, an error or a log
 * line), paced to its rate limit, backing off on throttling and errors, and halving a refused
 * batch until each refusal names its entity.
 *
 * @example const api = importApi({ url, apiKey }); const outcomes = await api.send(USERS_IMPORT, users)
 */
export function importApi(options: ImportApiOptions): ImportApi {
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = options.now ?? Date.now;
  const maxRetries = options.maxRetries ?? 8;
  const interval = 60_000 / (options.perMinute ?? IMPORT_REQUESTS_PER_MINUTE);
  const base = options.url.replace(/\/+$/, "");
  let nextStart = 0;
  let requests = 0;

  /** One request, retried while the platform asks to wait: the final answer, or an error. */
  const post = async (path: string, body: unknown): Promise<{ status: number; body: unknown }> => {
    let last = "";
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      const wait = nextStart - now();
      if (wait > 0) await sleep(wait);
      nextStart = now() + interval;
      requests++;
      let response: Response | undefined;
      try {
        response = await doFetch(`${base}${path}`, {
          method: "POST",
          headers: { apiKey: options.apiKey, "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        });
      } catch (error) {
        last = error instanceof Error && error.name === "TimeoutError" ? "timed out" : "network error";
      }
      if (response) {
        const answer = parseJsonText(await response.text().catch(() => ""));
        if (response.status === 401 || response.status === 403)
          throw new ImportAuthError(
            `the data import API refused the app's API key (${response.status}): check the import configuration (IMPORT_API_KEYS, or the import secret)`,
          );
        if (response.status === 404)
          throw new ImportPathError(
            `POST ${path}: the data import API answered 404: check the app's import address (it ends in /v3.0/data_import)`,
          );
        if (response.status !== 429 && response.status < 500)
          return { status: response.status, body: answer };
        const reason = errorReason(answer);
        last = `${response.status}${reason ? `: ${reason}` : ""}`;
      }
      if (attempt < maxRetries) await sleep(retryDelay(response, attempt, { baseMs: 500, capMs: 30_000 }));
    }
    throw new ImportUnavailableError(`POST ${path}: ${last} after ${maxRetries + 1} attempts`);
  };

  const send = async <T extends { [key: string]: unknown }>(
    kind: ReadyImportKind<T>,
    entries: readonly T[],
  ): Promise<EntityOutcome[]> => {
    if (entries.length === 0) return [];
    const ids = entries.map(kind.id);
    const answer = await post(kind.path, kind.body(entries));
    if (answer.status >= 200 && answer.status < 300) return outcomesOf(ids, answer.body);
    // The request was refused whole: halve it until the refusal is one entity's.
    if (entries.length > 1) {
      const half = Math.ceil(entries.length / 2);
      return [...(await send(kind, entries.slice(0, half))), ...(await send(kind, entries.slice(half)))];
    }
    const reason = errorReason(answer.body);
    return [
      { id: ids[0] ?? "", result: "refused", reason: `${answer.status}${reason ? `: ${reason}` : ""}` },
    ];
  };

  return {
    send,
    get requests() {
      return requests;
    },
  };
}
