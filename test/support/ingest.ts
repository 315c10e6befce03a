import http from "node:http";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import type { IngestDependencies, IngestRequest } from "../../shared/ingest/core";
import { basicAuthorization, staticCredentialSource } from "../../shared/ingest/credentials";
import type { BlobStore } from "../../shared/ports/blob-store";
import type { MessageQueue, QueueMessage } from "../../shared/ports/message-queue";

/** Builds `Authorization: Basic ...` for a pair (the tools' own builder). */
export const basic = basicAuthorization;

export const RECEIVED_AT = 1_700_000_000_123;

export function request(overrides: Partial<IngestRequest> = {}): IngestRequest {
  return {
    method: "POST",
    headers: { authorization: basic("platform", "s3cret") },
    body: JSON.stringify({ trigger: "group_created", appId: "app1", data: {} }),
    isBase64Encoded: false,
    receivedAt: RECEIVED_AT,
    ...overrides,
  };
}

/** In-memory stand-ins for the unit tests (the integration tests use fauxqs). */
export function recordingQueue(): MessageQueue & { sent: QueueMessage[] } {
  const sent: QueueMessage[] = [];
  return { sent, send: async (m) => void sent.push(m) };
}

export function memoryStore(): BlobStore & { objects: Map<string, Uint8Array> } {
  const objects = new Map<string, Uint8Array>();
  return {
    bucket: "test-bucket",
    objects,
    async put(key, body) {
      const bytes = typeof body === "string" ? Buffer.from(body) : body;
      objects.set(key, bytes);
      return { bucket: "test-bucket", key, size: bytes.byteLength };
    },
    async getText(key) {
      const bytes = objects.get(key);
      if (!bytes) throw new Error(`no object ${key}`);
      return Buffer.from(bytes).toString("utf8");
    },
    async getBytes(key) {
      const bytes = objects.get(key);
      if (!bytes) throw new Error(`no object ${key}`);
      return bytes;
    },
    getBytesIfPresent: async (key) => objects.get(key),
  };
}

export const DEFAULT_CREDENTIALS: WebhookCredential[] = [{ username: "platform", password: "s3cret" }];

export function ingestDeps(overrides: Partial<IngestDependencies> = {}) {
  const queue = recordingQueue();
  const oversizeStore = memoryStore();
  const deps: IngestDependencies = {
    credentials: staticCredentialSource(DEFAULT_CREDENTIALS),
    queue,
    oversizeStore,
    limits: { maxBodyBytes: 6_000_000, inlineBodyLimitBytes: 1_044_480, maxJsonDepth: 64 },
    ...overrides,
  };
  return { deps, queue, oversizeStore };
}

/**
 * POSTs a body to a running local stack's webhook with its credentials, as the platform would.
 * Resolves to the status and the eventId answered (status 0 when the stack did not answer).
 */
export async function postWebhook(
  stack: { webhookUrl: string; credentials: { username: string; password: string } },
  body: string,
): Promise<{ status: number; eventId?: string }> {
  try {
    const response = await fetch(stack.webhookUrl, {
      method: "POST",
      headers: {
        authorization: basic(stack.credentials.username, stack.credentials.password),
        "content-type": "application/json",
      },
      body,
    });
    return { status: response.status, eventId: ((await response.json()) as { eventId?: string }).eventId };
  } catch {
    return { status: 0 };
  }
}

/**
 * A raw HTTP request to a local gateway on `port`: the path and the bytes go out exactly as given
 * (no client-side normalisation); the answer's status and JSON body (`{}` when empty).
 */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  body: Buffer,
  headers: Record<string, string | number>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, method, path, headers: { ...headers, "content-length": body.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            json: JSON.parse(Buffer.concat(chunks).toString() || "{}"),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
