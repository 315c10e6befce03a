import http from "node:http";
import type { AddressInfo } from "node:net";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from "aws-lambda";

export type HttpApiHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

/** API Gateway HTTP APIs refuse bodies over 10 MB before the function sees them. */
const API_GATEWAY_MAX_BODY = 10 * 1024 * 1024;

/** Content types API Gateway passes as text; anything else arrives base64-encoded. */
function isText(contentType: string | undefined): boolean {
  return (
    !contentType || /^(text\/|application\/(json|.*\+json|xml|x-www-form-urlencoded))/i.test(contentType)
  );
}

/** Turns a Node request into the API Gateway HTTP API (payload 2.0) event the ingest receives. */
export function toHttpApiEvent(
  req: http.IncomingMessage,
  body: Buffer,
  receivedAt: number,
): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? "/", "http://local");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(",") : value;
  }
  const text = isText(headers["content-type"]);
  const method = req.method ?? "GET";
  return {
    version: "2.0",
    routeKey: `${method} ${url.pathname}`,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    body: body.length === 0 ? undefined : text ? body.toString("utf8") : body.toString("base64"),
    isBase64Encoded: body.length > 0 && !text,
    requestContext: {
      accountId: "000000000000",
      apiId: "local",
      domainName: headers.host ?? "localhost",
      domainPrefix: "local",
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: `${receivedAt}-${Math.random().toString(16).slice(2)}`,
      routeKey: `${method} ${url.pathname}`,
      stage: "$default",
      time: new Date(receivedAt).toISOString(),
      timeEpoch: receivedAt,
    },
  };
}

export interface GatewayOptions {
  port: number;
  host: string;
  ingest: HttpApiHandler;
  isReady: () => boolean;
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

/**
 * The local stand-in for API Gateway: `POST /webhook` (any method reaches the function, which
 * answers 405 itself), `GET /health` (200 once everything is ready), 404 elsewhere.
 */
export async function startGateway(options: GatewayOptions): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const started = Date.now();
    const url = new URL(req.url ?? "/", "http://local");
    if (url.pathname === "/health") {
      const ready = options.isReady();
      send(res, ready ? 200 : 503, { status: ready ? "ready" : "starting" });
      return;
    }
    if (url.pathname !== "/webhook") {
      send(res, 404, { error: "not-found", message: "POST /webhook is the only route" });
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
        const result = await options.ingest(toHttpApiEvent(req, Buffer.concat(chunks), started));
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
