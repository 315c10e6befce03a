/**
 * npm run bench:ingest — the ingest core against fauxqs, next to a bare SendMessage of the same
 * bodies with the same client, measured interleaved in one run; and the deployed ingest and projector
 * bundles' sizes.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { build } from "esbuild";
import { FUNCTION_ENTRIES, lambdaBuildOptions } from "../infra/bundling";
import { s3BlobStore } from "../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../shared/adapters/sqs-message-queue";
import { ingestWebhook } from "../shared/ingest/core";
import { staticCredentialSource } from "../shared/ingest/credentials";
import { emulatorClients } from "../tools/local/clients";
import { percentile, startFauxqsProcess } from "./support";

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2000);
const WARMUP = 200;
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 25);
const BARE_SQS_ENTRY = fileURLToPath(new URL("./bare-sqs-sender.ts", import.meta.url));

function bodyOfSize(bytes: number): string {
  const base = {
    trigger: "message_sent",
    appId: "bench-app",
    region: "us",
    webhook: "wh",
    data: { text: "" },
  };
  const padding = bytes - JSON.stringify(base).length;
  return JSON.stringify({ ...base, data: { text: "x".repeat(Math.max(0, padding)) } });
}

async function bundleSize(entry: string): Promise<number> {
  const out = await build({ ...lambdaBuildOptions(entry), write: false });
  return out.outputFiles.reduce((sum, f) => sum + f.contents.byteLength, 0);
}

/**
 * CPU time (user + system) of importing a bundle in a fresh Node process, as Lambda's init does:
 * the ingest's and a bare SQS sender's, interleaved, median of COLD_RUNS each.
 */
async function coldStart(): Promise<{ ingest: number; bare: number }> {
  const dir = mkdtempSync(join(tmpdir(), "bench-cold-"));
  try {
    const files: Record<"ingest" | "bare", string> = { ingest: "", bare: "" };
    for (const [name, entry] of [
      ["ingest", FUNCTION_ENTRIES.ingest],
      ["bare", BARE_SQS_ENTRY],
    ] as const) {
      const out = await build({ ...lambdaBuildOptions(entry), write: false });
      files[name] = join(dir, `${name}.mjs`);
      writeFileSync(files[name], out.outputFiles[0]?.contents ?? "");
    }
    const env = {
      PATH: process.env.PATH ?? "",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "bench",
      AWS_SECRET_ACCESS_KEY: "bench",
      EVENTS_QUEUE_URL: "https://sqs.us-east-1.amazonaws.com/000000000000/bench",
      DATA_BUCKET: "bench",
      WEBHOOK_CREDENTIALS_SECRET_ID: "bench",
      POWERTOOLS_SERVICE_NAME: "ingest",
    };
    const probe = (file: string) =>
      Number(
        execFileSync(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            `const c = process.cpuUsage(); await import(${JSON.stringify(pathToFileURL(file).href)}); const d = process.cpuUsage(c); console.log((d.user + d.system) / 1000);`,
          ],
          { env, encoding: "utf8" },
        ).trim(),
      );
    const ingest: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      ingest.push(probe(files.ingest));
      bare.push(probe(files.bare));
    }
    return { ingest: percentile(ingest, 50), bare: percentile(bare, 50) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const emulator = await startFauxqsProcess();
  const { sqs, s3 } = emulatorClients({ aws: emulator.endpoint });
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "bench-events" }));
    if (!QueueUrl) throw new Error("no queue url");
    await s3.send(new CreateBucketCommand({ Bucket: "bench" }));
    const deps = {
      credentials: staticCredentialSource([{ username: "bench", password: "benchpass" }]),
      queue: sqsMessageQueue(sqs, QueueUrl),
      oversizeStore: s3BlobStore(s3, "bench"),
      limits: { maxBodyBytes: 6_000_000, inlineBodyLimitBytes: 1_044_480, maxJsonDepth: 64 },
    };
    const authorization = `Basic ${Buffer.from("bench:benchpass").toString("base64")}`;
    const rows = [];
    for (const size of [1024, 64 * 1024]) {
      const body = bodyOfSize(size);
      const core: number[] = [];
      const bare: number[] = [];
      for (let i = 0; i < WARMUP + ITERATIONS; i++) {
        // Interleaved, so both see the same machine noise.
        let t = performance.now();
        const result = await ingestWebhook(
          {
            method: "POST",
            headers: { authorization },
            body,
            isBase64Encoded: false,
            receivedAt: Date.now(),
          },
          deps,
        );
        const coreMs = performance.now() - t;
        if (result.response.statusCode !== 200)
          throw new Error(`ingest answered ${result.response.statusCode}`);
        t = performance.now();
        await sqs.send(
          new SendMessageCommand({
            QueueUrl,
            MessageBody: body,
            MessageAttributes: { trigger: { DataType: "String", StringValue: "message_sent" } },
          }),
        );
        const bareMs = performance.now() - t;
        if (i >= WARMUP) {
          core.push(coreMs);
          bare.push(bareMs);
        }
      }
      const row = {
        body: `${size / 1024} KB`,
        "ingest p50 ms": percentile(core, 50).toFixed(3),
        "ingest p99 ms": percentile(core, 99).toFixed(3),
        "SendMessage p50 ms": percentile(bare, 50).toFixed(3),
        "SendMessage p99 ms": percentile(bare, 99).toFixed(3),
        "ratio p50": (percentile(core, 50) / percentile(bare, 50)).toFixed(2),
        "ratio p99": (percentile(core, 99) / percentile(bare, 99)).toFixed(2),
      };
      rows.push(row);
    }
    console.log(
      `ingest core vs bare SendMessage (${ITERATIONS} each, interleaved, fauxqs in its own process)`,
    );
    console.table(rows);
    const bytes = await bundleSize(FUNCTION_ENTRIES.ingest);
    console.log(`ingest bundle (minified, SDK bundled): ${(bytes / 1024).toFixed(1)} KB (target ≤ 300 KB)`);
    console.log(`bare SQS sender bundle: ${((await bundleSize(BARE_SQS_ENTRY)) / 1024).toFixed(1)} KB`);
    const cold = await coldStart();
    console.log(
      `cold start: ingest ${cold.ingest.toFixed(1)} ms, bare SQS ${cold.bare.toFixed(1)} ms, ratio ${(cold.ingest / cold.bare).toFixed(2)} (CPU time of the bundle's import in a fresh Node ${process.versions.node} process, interleaved, median of ${COLD_RUNS}; target ≤ 1.3)`,
    );
    const projectorBytes = await bundleSize(FUNCTION_ENTRIES.projector);
    console.log(
      `projector bundle (minified, SDK bundled): ${(projectorBytes / 1024).toFixed(1)} KB (target ≤ 450 KB; 916.5 KB with classic zod)`,
    );
  } finally {
    sqs.destroy();
    s3.destroy();
    await emulator.stop();
  }
}

await main();
