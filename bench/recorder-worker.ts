/**
 * The measured side of bench:recorder, bundled like a Lambda function and run in its own node
 * process, so that its peak RSS is the recorder's own. Mode `raw`: copy the URL to /dev/null.
 * Mode `recorder`: archive it through the recorder core. Prints one JSON line of figures.
 */
import { createWriteStream } from "node:fs";
import http from "node:http";
import { performance } from "node:perf_hooks";
import { pipeline } from "node:stream/promises";
import { Upload } from "@aws-sdk/lib-storage";
import type { SessionState } from "@webhook-backend/stream/projections/sessions";
import { documentClient, dynamoItemStore } from "../shared/adapters/dynamo-item-store";
import { SESSIONS_TABLE } from "../shared/platform/tables";
import { archiveRecording } from "../shared/recorder/archive";
import { systemResolver } from "../shared/recorder/safe-fetch";
import { emulatorClients } from "../tools/local/clients";
import { fileStream } from "../tools/simulate/file-server";

const [mode, url, s3Endpoint, dynamoEndpoint, sessionsTable, jobJson] = process.argv.slice(2);
const MB = 1024 * 1024;

function rawCopy(target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(target, async (response) => {
        let bytes = 0;
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
        });
        try {
          await pipeline(response, createWriteStream("/dev/null"));
          resolve(bytes);
        } catch (error) {
          reject(error);
        }
      })
      .once("error", reject);
  });
}

async function recorder(): Promise<number> {
  const { s3, dynamo } = emulatorClients({ aws: s3Endpoint, dynamodb: dynamoEndpoint });
  const result = await archiveRecording(JSON.parse(jobJson ?? "{}"), 1, {
    s3,
    bucket: "bench",
    sessions: dynamoItemStore<SessionState>(documentClient(dynamo), SESSIONS_TABLE, sessionsTable ?? ""),
    apiKeyFor: async () => undefined,
    resolver: systemResolver,
    allowHttp: true,
    allowedHosts: ["127.0.0.1"],
    apiKeyHosts: [],
    limits: {
      connectTimeoutMs: 5_000,
      idleTimeoutMs: 30_000,
      deadlineMs: 600_000,
      maxBytes: 5 * 1024 ** 3,
      maxRedirects: 5,
      partSize: Number(process.env.PART_MB ?? 5) * MB,
      queueSize: Number(process.env.QUEUE ?? 4),
    },
    now: Date.now,
  });
  if (result.status !== "archived") throw new Error(JSON.stringify(result));
  return result.size;
}

/** The emulator's ceiling: the same bytes, generated in-process, through a bare lib-storage Upload. */
async function bareUpload(): Promise<number> {
  const size = Number(url);
  const { s3 } = emulatorClients({ aws: s3Endpoint });
  const partSize = Number(process.env.PART_MB ?? 5) * MB;
  await new Upload({
    client: s3,
    params: { Bucket: "bench", Key: "bare", Body: fileStream(size) },
    partSize,
    queueSize: 4,
  }).done();
  return size;
}

const started = performance.now();
const bytes =
  mode === "raw" ? await rawCopy(url ?? "") : mode === "upload" ? await bareUpload() : await recorder();
const seconds = (performance.now() - started) / 1000;
// maxRSS is in KiB: the peak resident set of this process over its whole life.
console.log(JSON.stringify({ mode, bytes, seconds, peakRssMb: process.resourceUsage().maxRSS / 1024 }));
