import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";

/**
 * A local file server for recordings: `GET /recordings/<name>-<bytes>.mp4` streams `bytes`
 * deterministic bytes (a 1 MiB block repeated), as video/mp4 with a Content-Length. It never
 * holds a file in memory or on disk, so it can serve gigabytes.
 */
const BLOCK = (() => {
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < block.length; i += 32) createHash("sha256").update(String(i)).digest().copy(block, i);
  return block;
})();

/** The deterministic content of a file of `bytes` bytes, as a stream. */
export function fileStream(bytes: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= bytes) {
        this.push(null);
        return;
      }
      const n = Math.min(BLOCK.length, bytes - sent);
      sent += n;
      this.push(n === BLOCK.length ? BLOCK : BLOCK.subarray(0, n));
    },
  });
}

/** SHA-256 of the content `fileStream(bytes)` serves. */
export async function fileSha256(bytes: number): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of fileStream(bytes)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export interface FileServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves `/recordings/*-<bytes>.<ext>`; `extra` may answer other paths first (tests). */
export async function startFileServer(
  options: {
    port?: number;
    host?: string;
    extra?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  } = {},
): Promise<FileServer> {
  const server = http.createServer((req, res) => {
    if (options.extra?.(req, res)) return;
    const match = /^\/recordings\/.*-(\d+)\.(mp4|webm|mp3)(\?.*)?$/.exec(req.url ?? "");
    if (!match || req.method !== "GET") {
      res.writeHead(404).end();
      return;
    }
    const bytes = Number(match[1]);
    const type = { mp4: "video/mp4", webm: "video/webm", mp3: "audio/mpeg" }[match[2] as "mp4"];
    res.writeHead(200, { "content-type": type, "content-length": String(bytes) });
    fileStream(bytes).pipe(res);
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
