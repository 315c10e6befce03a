import { createHash } from "node:crypto";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { BlobStore } from "./adapters/blob-store";
import type { MessageQueue } from "./adapters/event-queue";
import {
  APP_ID_PATTERN,
  AUTH_REALM,
  BODY_LOCATION_S3,
  MESSAGE_ATTRIBUTE,
  S3_PREFIX,
  TRIGGER_PATTERN,
} from "./constants";
import { authenticateBasic, type CredentialSource, credentialAllowsApp } from "./credentials";
import { errorResponse, type HttpResponse, jsonResponse } from "./http";

/** The parts of an HTTP request the ingest looks at. */
export interface IngestRequest {
  method: string;
  /** Header names in lower case (API Gateway HTTP API delivers them so). */
  headers: Readonly<Record<string, string | undefined>>;
  body: string | undefined;
  isBase64Encoded: boolean;
  /** When the edge received the request, epoch ms (API Gateway's `requestContext.timeEpoch`). */
  receivedAt: number;
}

export interface IngestLimits {
  /** Bodies larger than this get 413. */
  maxBodyBytes: number;
  /** Bodies larger than this are stored in S3 and enqueued as a pointer. */
  inlineBodyLimitBytes: number;
  /** Deeper JSON nesting is refused with 400 (the payloads nest about 8 levels). */
  maxJsonDepth: number;
}

export interface IngestDependencies {
  credentials: CredentialSource;
  queue: MessageQueue;
  /** Where bodies too large for SQS go. */
  oversizeStore: BlobStore;
  limits: IngestLimits;
  /** When not empty, the only app ids this deployment accepts (403 for others). */
  allowedAppIds?: ReadonlySet<string>;
}

/** Why a request ended as it did: one value per metric dimension. */
export type IngestOutcome =
  | "accepted"
  | "accepted-oversize"
  | "unauthorized"
  | "forbidden-app"
  | "method-not-allowed"
  | "payload-too-large"
  | "invalid-body"
  | "enqueue-failed";

export interface IngestResult {
  response: HttpResponse;
  outcome: IngestOutcome;
  /** Why 401 or 400: a short machine-readable reason, for logs and metrics. */
  detail?: string;
  eventId?: string;
  trigger?: string;
  appId?: string;
  error?: unknown;
}

/** The pointer that replaces an oversize body on the queue. */
export interface OversizePointer {
  bucket: string;
  key: string;
  size: number;
  eventId: string;
}

/** Maps an API Gateway HTTP API (2.0) event to an `IngestRequest`. */
export function fromHttpApiEvent(event: APIGatewayProxyEventV2): IngestRequest {
  return {
    method: event.requestContext.http.method,
    headers: event.headers ?? {},
    body: event.body,
    isBase64Encoded: event.isBase64Encoded,
    receivedAt: event.requestContext.timeEpoch,
  };
}

/**
 * Whether a parsed JSON value nests arrays/objects deeper than `limit`. Iterative (no recursion),
 * stopping at the first path past the limit, so that a hostile body cannot make later stages
 * recurse without bound. V8's JSON.parse itself is not recursive.
 *
 * @example jsonDepthExceeds({ a: [[1]] }, 2) // true
 */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (typeof node !== "object" || node === null) continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

function isInvalidMessageContents(error: unknown): boolean {
  const name = (error as { name?: string; Code?: string }).name ?? "";
  return name.endsWith("InvalidMessageContents");
}

/**
 * Whether a valid JSON text holds characters SQS refuses in a message body. Valid UTF-8 JSON cannot
 * hold raw C0 controls (other than tab, LF, CR) or lone surrogates, so only U+FFFE and U+FFFF remain.
 * Such a body goes to S3, to stay byte-exact.
 */
function hasSqsForbiddenCharacters(text: string): boolean {
  return text.includes("\uFFFE") || text.includes("\uFFFF");
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function decodedSize(body: string, isBase64: boolean): number {
  return isBase64 ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body, "utf8");
}

type Envelope = { trigger: string; appId: string | undefined };

function readEnvelope(text: string, limits: IngestLimits): Envelope | { problem: string; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "not-json", message: "body is not valid JSON" };
  }
  if (jsonDepthExceeds(value, limits.maxJsonDepth))
    return { problem: "too-deep", message: `body nests deeper than ${limits.maxJsonDepth} levels` };
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { problem: "not-object", message: "body must be a JSON object" };
  const { trigger, appId } = value as Record<string, unknown>;
  if (trigger === undefined) return { problem: "no-trigger", message: "body has no 'trigger'" };
  if (typeof trigger !== "string") return { problem: "bad-trigger", message: "'trigger' must be a string" };
  if (!TRIGGER_PATTERN.test(trigger))
    return { problem: "bad-trigger", message: "'trigger' must be 1-100 characters of A-Z a-z 0-9 _ . : -" };
  if (appId !== undefined && (typeof appId !== "string" || !APP_ID_PATTERN.test(appId)))
    return { problem: "bad-app-id", message: "'appId' must be a string of 1-128 printable characters" };
  return { trigger, appId };
}

/** `oversize/<app>/<yyyy>/<mm>/<dd>/<eventId>.json`: deterministic, so a retried request overwrites itself. */
export function oversizeKey(appId: string | undefined, receivedAt: number, eventId: string): string {
  const day = new Date(receivedAt).toISOString().slice(0, 10).replaceAll("-", "/");
  return `${S3_PREFIX.oversize}${encodeURIComponent(appId ?? "_none")}/${day}/${eventId}.json`;
}

/**
 * The ingest core: authenticate, check the body just enough, store it durably, then answer.
 * 200 is returned only after SQS (and S3 for an oversize body) accepted the event; any storage
 * failure is a 503 so that the platform retries.
 *
 * @example
 * const { response } = await ingestWebhook(fromHttpApiEvent(event), deps);
 */
export async function ingestWebhook(request: IngestRequest, deps: IngestDependencies): Promise<IngestResult> {
  const auth = await authenticateBasic(request.headers.authorization, deps.credentials);
  if (!auth.ok) {
    return {
      outcome: "unauthorized",
      detail: auth.reason,
      response: errorResponse(
        401,
        "unauthorized",
        auth.reason === "missing" ? "Basic credentials are required" : "invalid Basic credentials",
        { "www-authenticate": `Basic realm="${AUTH_REALM}", charset="UTF-8"` },
      ),
    };
  }
  if (request.method.toUpperCase() !== "POST") {
    return {
      outcome: "method-not-allowed",
      response: errorResponse(405, "method-not-allowed", "only POST is accepted", { allow: "POST" }),
    };
  }

  const { limits } = deps;
  const raw = request.body ?? "";
  if (decodedSize(raw, request.isBase64Encoded) > limits.maxBodyBytes) {
    return {
      outcome: "payload-too-large",
      response: errorResponse(413, "payload-too-large", `body exceeds ${limits.maxBodyBytes} bytes`),
    };
  }
  const bytes = request.isBase64Encoded ? Buffer.from(raw, "base64") : Buffer.from(raw, "utf8");
  const invalid = (detail: string, message: string): IngestResult => ({
    outcome: "invalid-body",
    detail,
    response: errorResponse(400, "invalid-body", message),
  });
  if (bytes.byteLength === 0) return invalid("empty", "body is empty");
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return invalid("not-utf8", "body is not UTF-8 text");
  }
  const envelope = readEnvelope(text, limits);
  if ("problem" in envelope) return invalid(envelope.problem, envelope.message);
  const { trigger, appId } = envelope;
  const appAllowed = !deps.allowedAppIds?.size || (appId !== undefined && deps.allowedAppIds.has(appId));
  if (!appAllowed || !credentialAllowsApp(auth.credential, appId)) {
    return {
      outcome: "forbidden-app",
      trigger,
      appId,
      response: errorResponse(
        403,
        "forbidden-app",
        "these credentials may not deliver events for this appId",
      ),
    };
  }

  const eventId = createHash("sha256").update(bytes).digest("hex");
  const attributes: Record<string, string | number> = {
    [MESSAGE_ATTRIBUTE.trigger]: trigger,
    [MESSAGE_ATTRIBUTE.receivedAt]: request.receivedAt,
    [MESSAGE_ATTRIBUTE.eventId]: eventId,
    ...(appId === undefined ? {} : { [MESSAGE_ATTRIBUTE.appId]: appId }),
  };
  const viaS3 = async () => {
    const stored = await deps.oversizeStore.put(oversizeKey(appId, request.receivedAt, eventId), bytes, {
      contentType: "application/json",
      metadata: { "event-id": eventId, trigger },
    });
    const pointer: OversizePointer = { bucket: stored.bucket, key: stored.key, size: stored.size, eventId };
    await deps.queue.send({
      body: JSON.stringify(pointer),
      attributes: { ...attributes, [MESSAGE_ATTRIBUTE.bodyLocation]: BODY_LOCATION_S3 },
    });
  };
  let oversize = bytes.byteLength > limits.inlineBodyLimitBytes || hasSqsForbiddenCharacters(text);
  try {
    if (oversize) await viaS3();
    else {
      try {
        await deps.queue.send({ body: text, attributes });
      } catch (error) {
        // SQS refused the characters of the body (some emulators refuse all of outside the BMP):
        // the S3 path keeps it byte-exact instead of losing it.
        if (!isInvalidMessageContents(error)) throw error;
        oversize = true;
        await viaS3();
      }
    }
  } catch (error) {
    return {
      outcome: "enqueue-failed",
      eventId,
      trigger,
      appId,
      error,
      response: errorResponse(503, "enqueue-failed", "the event could not be stored; retry later", {
        "retry-after": "10",
      }),
    };
  }
  return {
    outcome: oversize ? "accepted-oversize" : "accepted",
    eventId,
    trigger,
    appId,
    response: jsonResponse(200, { status: "accepted", eventId }),
  };
}
