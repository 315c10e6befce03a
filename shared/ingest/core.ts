import { createHash } from "node:crypto";
import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { AppAllowlist } from "../apps/allowlist";
import { oversizeKey } from "../contracts/bucket-layout";
import {
  BODY_LOCATION_S3,
  eventMessageAttributes,
  messageGroupOf,
  type OversizePointer,
  type StampedEventAttributes,
} from "../contracts/queue-messages";
import { APP_ID_PATTERN, AUTH_REALM, TRIGGER_PATTERN } from "../platform/constants";
import { loggedUsername } from "../platform/log-safe";
import type { IngestOutcome } from "../platform/outcomes";
import type { BlobStore } from "../ports/blob-store";
import type { MessageQueue } from "../ports/message-queue";
import type { CredentialSource } from "./credential-source";
import { authenticateBasic, credentialAllowsApp } from "./credentials";
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
  /** Which apps this deployment accepts (403 for others). @default - any app the credentials allow */
  allowedApps?: AppAllowlist;
}

export interface IngestResult {
  response: HttpResponse;
  outcome: IngestOutcome;
  /** Why 401 or 400: a short machine-readable reason, for logs and metrics. */
  detail?: string;
  /**
   * A 401's username as the logs keep it (`loggedUsername`: a prefix and a hash, never in full,
   * never the password): `apps --refused` maps it to the apps that deliver with it (#52, #58).
   */
  username?: string;
  /** With `username`: whether the deployment holds a credential of that name (a scanner's guess does not). */
  usernameKnown?: boolean;
  eventId?: string;
  trigger?: string;
  appId?: string;
  error?: unknown;
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
/** With the `u` flag a well-formed pair is one code point: only lone surrogates match. */
const LONE_SURROGATE = /\p{Surrogate}/u;

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

type Rejection = IngestResult;

function unauthorized(
  reason: "missing" | "malformed" | "invalid",
  presented?: { username: string; known: boolean },
): Rejection {
  return {
    outcome: "unauthorized",
    detail: reason,
    ...(presented === undefined
      ? {}
      : { username: loggedUsername(presented.username), usernameKnown: presented.known }),
    response: errorResponse(
      401,
      "unauthorized",
      reason === "missing" ? "Basic credentials are required" : "invalid Basic credentials",
      { "www-authenticate": `Basic realm="${AUTH_REALM}", charset="UTF-8"` },
    ),
  };
}

function invalidBody(detail: string, message: string): Rejection {
  return { outcome: "invalid-body", detail, response: errorResponse(400, "invalid-body", message) };
}

/** The body's bytes and text, or why it cannot be taken: too large (413), empty or not UTF-8 (400). */
function readBody(request: IngestRequest, limits: IngestLimits): { bytes: Buffer; text: string } | Rejection {
  const raw = request.body ?? "";
  if (decodedSize(raw, request.isBase64Encoded) > limits.maxBodyBytes) {
    return {
      outcome: "payload-too-large",
      response: errorResponse(413, "payload-too-large", `body exceeds ${limits.maxBodyBytes} bytes`),
    };
  }
  // A text body with a lone surrogate came from bytes that were not UTF-8 (re-encoding would alter them).
  if (!request.isBase64Encoded && LONE_SURROGATE.test(raw))
    return invalidBody("not-utf8", "body is not UTF-8 text");
  const bytes = request.isBase64Encoded ? Buffer.from(raw, "base64") : Buffer.from(raw, "utf8");
  if (bytes.byteLength === 0) return invalidBody("empty", "body is empty");
  try {
    return { bytes, text: utf8.decode(bytes) };
  } catch {
    return invalidBody("not-utf8", "body is not UTF-8 text");
  }
}

/**
 * Stores the event durably: inline in SQS, or in S3 with a pointer in SQS when it is too large
 * or holds characters SQS refuses, in its app's message group (fair queues). Resolves to whether it
 * went through S3; throws if nothing accepted it. The ingest's path, and `resend`'s.
 *
 * @example await storeEvent(bytes, text, { trigger, receivedAt, eventId }, { queue, oversizeStore, limits })
 */
export async function storeEvent(
  bytes: Buffer,
  text: string,
  attributes: StampedEventAttributes,
  deps: Pick<IngestDependencies, "queue" | "oversizeStore"> & {
    limits: Pick<IngestLimits, "inlineBodyLimitBytes">;
  },
): Promise<boolean> {
  const groupId = messageGroupOf(attributes.appId);
  const viaS3 = async () => {
    const stored = await deps.oversizeStore.put(
      oversizeKey(attributes.appId, attributes.receivedAt, attributes.eventId),
      bytes,
      {
        contentType: "application/json",
        metadata: { "event-id": attributes.eventId, trigger: attributes.trigger },
      },
    );
    const pointer: OversizePointer = { ...stored, eventId: attributes.eventId };
    await deps.queue.send({
      body: JSON.stringify(pointer),
      attributes: eventMessageAttributes({ ...attributes, bodyLocation: BODY_LOCATION_S3 }),
      groupId,
    });
    return true;
  };
  if (bytes.byteLength > deps.limits.inlineBodyLimitBytes || hasSqsForbiddenCharacters(text)) return viaS3();
  try {
    await deps.queue.send({ body: text, attributes: eventMessageAttributes(attributes), groupId });
    return false;
  } catch (error) {
    // SQS refused the characters of the body (some emulators refuse all of outside the BMP):
    // the S3 path keeps it byte-exact instead of losing it.
    if (!isInvalidMessageContents(error)) throw error;
    return viaS3();
  }
}

/** 503 with a retry hint: the event was not stored (the queue, or the apps table, failed). */
function storeUnavailable(
  fields: Pick<IngestResult, "eventId" | "trigger" | "appId">,
  error: unknown,
): IngestResult {
  return {
    outcome: "enqueue-failed",
    ...fields,
    error,
    response: errorResponse(503, "enqueue-failed", "the event could not be stored; retry later", {
      "retry-after": "10",
    }),
  };
}

/**
 * Whether the deployment accepts the app, or the error that kept its allowlist from answering (the
 * platform is then asked to retry: a refusal would lose the event at the source).
 */
async function isAppAllowed(
  allowlist: AppAllowlist | undefined,
  appId: string | undefined,
): Promise<boolean | { error: unknown }> {
  if (!allowlist) return true;
  if (appId === undefined) return false;
  try {
    return await allowlist.allows(appId);
  } catch (error) {
    return { error };
  }
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
  if (!auth.ok) return unauthorized(auth.reason, auth.reason === "invalid" ? auth : undefined);
  if (request.method.toUpperCase() !== "POST") {
    return {
      outcome: "method-not-allowed",
      response: errorResponse(405, "method-not-allowed", "only POST is accepted", { allow: "POST" }),
    };
  }
  const body = readBody(request, deps.limits);
  if ("outcome" in body) return body;
  const envelope = readEnvelope(body.text, deps.limits);
  if ("problem" in envelope) return invalidBody(envelope.problem, envelope.message);
  const { trigger, appId } = envelope;
  const appAllowed = await isAppAllowed(deps.allowedApps, appId);
  if (typeof appAllowed !== "boolean") return storeUnavailable({ trigger, appId }, appAllowed.error);
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

  const eventId = createHash("sha256").update(body.bytes).digest("hex");
  const fields = { eventId, trigger, appId };
  let viaS3: boolean;
  try {
    viaS3 = await storeEvent(body.bytes, body.text, { ...fields, receivedAt: request.receivedAt }, deps);
  } catch (error) {
    return storeUnavailable(fields, error);
  }
  return {
    outcome: viaS3 ? "accepted-oversize" : "accepted",
    ...fields,
    response: jsonResponse(200, { status: "accepted", eventId }),
  };
}
