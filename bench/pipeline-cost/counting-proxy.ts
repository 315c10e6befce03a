/**
 * The counting proxy the cost bench puts in front of each emulator: every AWS request passing
 * through is counted by operation (SNS's `PublishBatch` with its entries and billed chunks), and
 * each answer's body handed on (DynamoDB's consumed capacity). bench:erasure counts with it too.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { billedChunks } from "../../shared/stream/publish-batches";

/**
 * An SNS request (the query protocol: a form body): its action, and for a `PublishBatch` its
 * entries and the 64 KiB chunks SNS bills it as (messages and their attributes).
 */
function snsRequest(body: string): { op: string; entries: number; chunks: number } {
  const form = new URLSearchParams(body);
  const op = `sns:${form.get("Action") ?? "?"}`;
  if (op !== "sns:PublishBatch") return { op, entries: 0, chunks: 0 };
  let bytes = 0;
  let entries = 0;
  for (const [key, value] of form) {
    if (/^PublishBatchRequestEntries\.member\.\d+\.Message$/.test(key)) {
      entries++;
      bytes += Buffer.byteLength(value);
    } else if (/\.MessageAttributes\.entry\.\d+\.(Name|Value\.DataType|Value\.StringValue)$/.test(key))
      bytes += Buffer.byteLength(value);
  }
  return { op, entries, chunks: billedChunks(bytes) };
}

/**
 * A proxy that counts the AWS operations passing through it (and, for SNS's `PublishBatch`, its
 * entries and billed chunks: `sns:entries`, `sns:chunks`), hands each answer's body to `onAnswer`
 * and, given `onRequest`, each JSON request's body to it (the items written, `item-sizes.ts`).
 */
export async function countingProxy(
  target: string,
  onAnswer?: (op: string, body: Buffer) => void,
  onRequest?: (op: string, body: Buffer) => void,
) {
  const counts = new Map<string, number>();
  const upstream = new URL(target);
  const add = (name: string, n = 1) => counts.set(name, (counts.get(name) ?? 0) + n);
  const server = http.createServer(async (req, res) => {
    const amzTarget = req.headers["x-amz-target"];
    let op: string;
    let body: Buffer | undefined;
    if (typeof amzTarget === "string") {
      op = amzTarget.split(".").pop() ?? amzTarget;
      if (onRequest) {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        body = Buffer.concat(chunks);
        onRequest(op, body);
      }
    } else if (String(req.headers["content-type"]).includes("x-www-form-urlencoded")) {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      body = Buffer.concat(chunks);
      const sns = snsRequest(body.toString("utf8"));
      op = sns.op;
      add("sns:entries", sns.entries);
      add("sns:chunks", sns.chunks);
    } else {
      // S3 (REST): PUT, COPY, POST and LIST are priced as PUTs; GET and HEAD as GETs.
      const list = req.method === "GET" && /[?&](list-type|prefix)=/.test(req.url ?? "");
      op = list ? "s3:List" : `s3:${req.method}`;
    }
    // Bodies fauxqs refuses (characters outside the BMP, which real SQS accepts) take the S3
    // path: those sends and oversize objects are the emulator's, not AWS's, and counted apart.
    if (op.startsWith("s3:") && (req.url ?? "").includes("/oversize/")) op = "s3:emulator-oversize";
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        const name = (answer.statusCode ?? 500) >= 400 ? `${op}:refused` : op;
        add(name);
        res.writeHead(answer.statusCode ?? 500, answer.headers);
        if (onAnswer) {
          const chunks: Buffer[] = [];
          answer.on("data", (c: Buffer) => chunks.push(c));
          answer.on("end", () => onAnswer(name, Buffer.concat(chunks)));
        }
        answer.pipe(res);
      },
    );
    forward.on("error", () => res.writeHead(502).end());
    if (body) forward.end(body);
    else req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
