import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One AWS request a function sent, as the recording proxy read it off the wire: its service, its
 * operation (the SDK command's name) and the parameters IAM reads (names as the emulator knows
 * them: a queue URL, a topic ARN, a bucket and key, a table).
 */
export interface RecordedCall {
  service: "s3" | "sqs" | "sns" | "dynamodb" | "secretsmanager" | "athena";
  operation: string;
  params: Record<string, unknown>;
  /** The HTTP status it was answered with (a GetObject of an absent key: 404 here, 403 in AWS without s3:ListBucket). */
  status?: number;
}

/** What answers a service the local stack has no emulator for (Secrets Manager, Athena). */
export type Answer = (operation: string, input: Record<string, unknown>) => Promise<unknown>;

/**
 * A proxy in front of fauxqs and DynamoDB Local for one function, recording each request (as
 * bench:cost's counting proxy counts them, by operation, but whole): JSON protocols by their
 * `X-Amz-Target` and body, SNS's query protocol by its form, S3's REST requests by method, path
 * and query. Secrets Manager and Athena, which have no emulator, are answered by `answers` (the
 * function's SDK clients reach them through `AWS_ENDPOINT_URL_<SERVICE>`, set to this proxy).
 */
export async function recordingProxy(
  targets: { aws: string; dynamodb: string },
  answers: Partial<Record<"secretsmanager" | "athena", Answer>>,
) {
  const calls: RecordedCall[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const target = req.headers["x-amz-target"];
    try {
      if (typeof target === "string") {
        const [prefix = "", operation = ""] = target.split(".");
        const input = body.length ? (JSON.parse(body.toString("utf8")) as Record<string, unknown>) : {};
        const service = prefix.startsWith("DynamoDB")
          ? "dynamodb"
          : prefix === "secretsmanager"
            ? "secretsmanager"
            : prefix === "AmazonAthena"
              ? "athena"
              : "sqs";
        calls.push({ service, operation, params: input });
        const answer = service === "secretsmanager" || service === "athena" ? answers[service] : undefined;
        if (answer) {
          res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
          res.end(JSON.stringify(await answer(operation, input)));
          return;
        }
        forward(service === "dynamodb" ? targets.dynamodb : targets.aws, req, body, res, calls.at(-1));
        return;
      }
      const call = String(req.headers["content-type"]).includes("x-www-form-urlencoded")
        ? snsCall(body)
        : s3Call(req, body);
      calls.push(call);
      forward(targets.aws, req, body, res, call);
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function forward(
  target: string,
  req: http.IncomingMessage,
  body: Buffer,
  res: http.ServerResponse,
  call: RecordedCall | undefined,
) {
  const upstream = new URL(target);
  const request = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      if (call) call.status = answer.statusCode;
      res.writeHead(answer.statusCode ?? 500, answer.headers);
      answer.pipe(res);
    },
  );
  request.on("error", () => res.writeHead(502).end());
  request.end(body);
}

/** An SNS request (query protocol): its action and topic. */
function snsCall(body: Buffer): RecordedCall {
  const form = new URLSearchParams(body.toString("utf8"));
  return {
    service: "sns",
    operation: form.get("Action") ?? "?",
    params: { TopicArn: form.get("TopicArn") ?? undefined },
  };
}

/**
 * An S3 REST request (path style: `/<bucket>/<key>`) as the SDK command that sends it: the
 * operation from the method and query, the bucket, key, a listing's prefix, a copy's source and
 * a multi-object delete's keys.
 */
function s3Call(req: http.IncomingMessage, body: Buffer): RecordedCall {
  const url = new URL(req.url ?? "/", "http://s3");
  const [, bucket = "", ...rest] = url.pathname.split("/");
  const key = decodeURIComponent(rest.join("/"));
  const q = url.searchParams;
  const params: Record<string, unknown> = { Bucket: bucket, ...(key ? { Key: key } : {}) };
  const method = req.method ?? "GET";
  let operation: string;
  if (method === "GET" && !key) {
    operation =
      q.get("list-type") === "2"
        ? "ListObjectsV2"
        : q.has("uploads")
          ? "ListMultipartUploads"
          : "ListObjects";
    if (q.has("prefix")) params.Prefix = q.get("prefix");
  } else if (method === "GET") operation = q.has("uploadId") ? "ListParts" : "GetObject";
  else if (method === "HEAD") operation = key ? "HeadObject" : "HeadBucket";
  else if (method === "PUT" && q.has("uploadId")) operation = "UploadPart";
  else if (method === "PUT" && q.has("tagging")) operation = "PutObjectTagging";
  else if (method === "PUT" && req.headers["x-amz-copy-source"]) {
    operation = "CopyObject";
    params.CopySource = decodeURIComponent(String(req.headers["x-amz-copy-source"]));
  } else if (method === "PUT") operation = "PutObject";
  else if (method === "POST" && q.has("uploads")) operation = "CreateMultipartUpload";
  else if (method === "POST" && q.has("uploadId")) operation = "CompleteMultipartUpload";
  else if (method === "POST" && q.has("delete")) {
    operation = "DeleteObjects";
    params.Keys = [...body.toString("utf8").matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);
  } else if (method === "DELETE") operation = q.has("uploadId") ? "AbortMultipartUpload" : "DeleteObject";
  else operation = `${method}?`;
  return { service: "s3", operation, params };
}
