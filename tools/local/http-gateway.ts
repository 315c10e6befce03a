import http from "node:http";
import type { AddressInfo } from "node:net";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";
import { webhookPath } from "../../shared/platform/webhook-path";

export type HttpApiHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

/** API Gateway HTTP APIs refuse bodies over 10 MB before the function sees them. */
const API_GATEWAY_MAX_BODY = 10 * 1024 * 1024;

/** Content types passed as text; anything else arrives base64-encoded. */
function isTextType(contentType: string | undefined): boolean {
  return (
    !contentType || /^(text\/|application\/(json|.*\+json|xml|x-www-form-urlencoded))/i.test(contentType)
  );
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The body as the function receives it: text only when the content type is text and the bytes are
 * valid UTF-8; base64 otherwise (`isBase64Encoded`). AWS does not document exactly when the HTTP
 * API base64-encodes a request body; this stand-in chooses the rule that can never alter a byte,
 * and the ingest decodes strictly whichever way the body comes.
 */
function bodyField(
  body: Buffer,
  contentType: string | undefined,
): { body?: string; isBase64Encoded: boolean } {
  if (body.length === 0) return { isBase64Encoded: false };
  if (isTextType(contentType)) {
    try {
      return { body: strictUtf8.decode(body), isBase64Encoded: false };
    } catch {
      // invalid UTF-8: hand over the bytes as they came
    }
  }
  return { body: body.toString("base64"), isBase64Encoded: true };
}

/** The path as sent, before the query: API Gateway matches routes on it literally (no dot-segment or %-decoding). */
function rawPathOf(url: string | undefined): string {
  const raw = url ?? "/";
  const query = raw.indexOf("?");
  return query < 0 ? raw : raw.slice(0, query);
}

/** Turns a Node request into the API Gateway HTTP API (payload 2.0) event the ingest receives. */
export function toHttpApiEvent(
  req: http.IncomingMessage,
  body: Buffer,
  receivedAt: number,
  routeKey = WEBHOOK_ROUTE,
): APIGatewayProxyEventV2 {
  const rawPath = rawPathOf(req.url);
  const rawQueryString = (req.url ?? "").slice(rawPath.length + 1);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(",") : value;
  }
  const method = req.method ?? "GET";
  return {
    version: "2.0",
    routeKey,
    rawPath,
    rawQueryString,
    headers,
    ...bodyField(body, headers["content-type"]),
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName: headers.host ?? "localhost",
      domainPrefix: "local",
      http: {
        method,
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: `${receivedAt}-${Math.random().toString(16).slice(2)}`,
      routeKey,
      stage: "$default",
      time: new Date(receivedAt).toISOString(),
      timeEpoch: receivedAt,
    },
  };
}

/**
 * A webhook delivery as API Gateway hands it to the ingest (a POST with Basic credentials,
 * received at `receivedAt`): what the benchmarks and tests that call the handler directly send.
 */
export function webhookPostEvent(
  body: string,
  receivedAt: number,
  credentials: { username: string; password: string },
): APIGatewayProxyEventV2 {
  return {
    version: "2.0",
    routeKey: WEBHOOK_ROUTE,
    rawPath: "/webhook",
    rawQueryString: "",
    headers: {
      authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`,
      "content-type": "application/json",
    },
    body,
    isBase64Encoded: false,
    requestContext: {
      http: { method: "POST" },
      timeEpoch: receivedAt,
    } as APIGatewayProxyEventV2["requestContext"],
  };
}

export interface GatewayOptions {
  port: number;
  host: string;
  ingest: HttpApiHandler;
  isReady: () => boolean;
  /**
   * The webhook URL's secret segment (`/webhook/<token>`, as `webhookPathToken` deployed): any
   * other path is a 404 that never reaches the ingest. @default - `/webhook`
   */
  pathToken?: string;
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

/**
 * The edge's receipt clock: epoch ms, strictly increasing across the requests of this gateway, so
 * that two deliveries received in the same millisecond still rank in the order they arrived (a
 * tie of facts at the same instant falls to the first receipt). It runs at most a few ms ahead of
 * the wall clock under a burst. API Gateway's own `timeEpoch` is per request: deployed, two
 * deliveries in the same ms reach different function instances and rank by event id.
 */
function receiptClock(now: () => number = Date.now): () => number {
  let last = 0;
  return () => {
    last = Math.max(now(), last + 1);
    return last;
  };
}

/** The one route the CDK app deploys, without a path token. */
const WEBHOOK_ROUTE = `POST ${webhookPath()}`;

/**
 * The local stand-in for API Gateway: the route `POST /webhook` (or `POST /webhook/<token>`, as
 * the stack deploys it: `webhookPath`), matched as API Gateway matches it (method and raw path
 * exactly: `/%2e%2e/webhook`, `GET /webhook` or another token is a 404 `{"message":"Not
 * Found"}` that invokes nothing, as deployed); `/health` (200 once everything is ready) is the
 * stand-in's own.
 */
export async function startGateway(options: GatewayOptions): Promise<{ server: http.Server; port: number }> {
  const stamp = receiptClock();
  const route = `POST ${webhookPath(options.pathToken)}`;
  const server = http.createServer((req, res) => {
    const started = stamp();
    const path = rawPathOf(req.url);
    if (path === "/health") {
      const ready = options.isReady();
      send(res, ready ? 200 : 503, { status: ready ? "ready" : "starting" });
      return;
    }
    if (`${req.method} ${path}` !== route) {
      send(res, 404, { message: "Not Found" });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > API_GATEWAY_MAX_BODY) {
        if (!refused) send(res, 413, { message: "Request Entity Too Large" });
        refused = true;
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", async () => {
      if (refused) return;
      try {
        const result = await options.ingest(toHttpApiEvent(req, Buffer.concat(chunks), started, route));
        res
          .writeHead(result.statusCode ?? 200, (result.headers ?? {}) as Record<string, string>)
          .end(result.body ?? "");
      } catch {
        // API Gateway answers 500 when the function itself fails.
        send(res, 500, { message: "Internal Server Error" });
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
