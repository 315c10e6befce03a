/**
 * npm run bench:ingest — the ingest core against fauxqs, next to a bare SendMessage of the same
 * bodies with the same client, measured interleaved in one run; and the ingest's and the projector's
 * code as synth stages it: bytes loaded at start-up and import CPU time against a bare SQS sender.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { App } from "aws-cdk-lib";
import { Asset } from "aws-cdk-lib/aws-s3-assets";
import { buildApp } from "../infra/app";
import { bundleFunction, FUNCTION_ENTRIES } from "../infra/bundling";
import { BackendFunction } from "../infra/constructs/backend-function";
import { s3BlobStore } from "../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../shared/adapters/sqs-message-queue";
import { ingestWebhook } from "../shared/ingest/core";
import { staticCredentialSource } from "../shared/ingest/credentials";
import { emulatorClients } from "../tools/local/clients";
import { type Bundle, bundleAt, bundleKb, PROBE_ENV, SETTLE } from "./bundles";
import { percentile, startFauxqsProcess } from "./support";

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2000);
const WARMUP = 200;
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 41);
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

/** A deployment that restricts apps (`restrictApps`): the ingest loads the apps table's reader at init. */
const RESTRICTED_ENV = { ...PROBE_ENV, ALLOWED_APPS_TABLE: "bench-apps" };

/**
 * The ingest's and the projector's code as `cdk synth` stages it (the stack built in this process,
 * cdk-nag off: it does not change the code); the bare sender bundled by the same `bundleFunction`,
 * without source maps as the ingest; and the ingest with them (as before), for comparison.
 */
function deployedBundles(outdir: string): Record<"ingest" | "projector" | "bare" | "ingestMapped", Bundle> {
  process.env.NO_NAG = "1";
  const { stack } = buildApp(new App({ outdir, context: { alarms: "none" } }));
  const staged = (id: string): Bundle => {
    const fn = stack.node.findChild(id);
    const code = fn instanceof BackendFunction ? fn.function.node.findChild("Code") : undefined;
    if (!(code instanceof Asset)) throw new Error(`no bundled code for ${id}`);
    return bundleAt(join(outdir, code.assetPath));
  };
  const bare = join(outdir, "bare-sqs-sender");
  bundleFunction(BARE_SQS_ENTRY, bare, { sourceMaps: false });
  const ingestMapped = join(outdir, "ingest-with-source-maps");
  bundleFunction(FUNCTION_ENTRIES.ingest, ingestMapped, { sourceMaps: true });
  return {
    ingest: staged("Ingest"),
    projector: staged("Projector"),
    bare: bundleAt(bare),
    ingestMapped: bundleAt(ingestMapped),
  };
}

/**
 * CPU time (user + system) of importing a bundle's handler in a fresh Node process, as Lambda's
 * init does, with its function's NODE_OPTIONS: the ingest's and a bare SQS sender's, interleaved,
 * median of COLD_RUNS each.
 */
function coldStart(ingest: Bundle, bare: Bundle, ingestEnv = PROBE_ENV): { ingest: number; bare: number } {
  const probe = ({ handlerFile, nodeOptions }: Bundle, env = PROBE_ENV) =>
    Number(
      execFileSync(
        process.execPath,
        [
          ...nodeOptions,
          "--input-type=module",
          "-e",
          `const c = process.cpuUsage(); await import(${JSON.stringify(pathToFileURL(handlerFile).href)}); ${SETTLE} const d = process.cpuUsage(c); console.log((d.user + d.system) / 1000);`,
        ],
        { env, encoding: "utf8" },
      ).trim(),
    );
  const ingestMs: number[] = [];
  const bareMs: number[] = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    ingestMs.push(probe(ingest, ingestEnv));
    bareMs.push(probe(bare));
  }
  return { ingest: percentile(ingestMs, 50), bare: percentile(bareMs, 50) };
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
    const outdir = mkdtempSync(join(tmpdir(), "bench-bundles-"));
    try {
      const bundles = deployedBundles(outdir);
      const ingest = bundleKb(bundles.ingest);
      const bare = bundleKb(bundles.bare);
      const projector = bundleKb(bundles.projector);
      console.log(
        `ingest bundle (as synth stages it): ${ingest.startup.toFixed(1)} KB at start-up, ${ingest.total.toFixed(1)} KB with the code loaded on first use (S3, for an oversize body) (target ≤ 250 KB at start-up)`,
      );
      console.log(`bare SQS sender bundle: ${bare.startup.toFixed(1)} KB at start-up (bundled the same way)`);
      const cold = coldStart(bundles.ingest, bundles.bare);
      console.log(
        `cold start: ingest ${cold.ingest.toFixed(1)} ms, bare SQS ${cold.bare.toFixed(1)} ms, ratio ${(cold.ingest / cold.bare).toFixed(2)} (CPU time of the handler's import in a fresh Node ${process.versions.node} process, interleaved, median of ${COLD_RUNS}; target ≤ 1.3)`,
      );
      const restricted = bundleKb(bundles.ingest, RESTRICTED_ENV);
      const coldRestricted = coldStart(bundles.ingest, bundles.bare, RESTRICTED_ENV);
      console.log(
        `  restricting apps (restrictApps: the apps table's reader, DynamoDB's client, loaded during init): ${restricted.startup.toFixed(1)} KB at start-up, cold start ${coldRestricted.ingest.toFixed(1)} ms, bare SQS ${coldRestricted.bare.toFixed(1)} ms, ratio ${(coldRestricted.ingest / coldRestricted.bare).toFixed(2)}`,
      );
      const mapped = coldStart(bundles.ingestMapped, bundles.bare);
      console.log(
        `  the ingest with source maps and --enable-source-maps (its setting before): ${mapped.ingest.toFixed(1)} ms, bare SQS ${mapped.bare.toFixed(1)} ms, ratio ${(mapped.ingest / mapped.bare).toFixed(2)}`,
      );
      console.log(
        `projector bundle (as synth stages it): ${projector.startup.toFixed(1)} KB at start-up, ${projector.total.toFixed(1)} KB with the code loaded on first use (SQS, for a recording job) (target ≤ 450 KB; 916.5 KB with classic zod)`,
      );
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  } finally {
    sqs.destroy();
    s3.destroy();
    await emulator.stop();
  }
}

await main();
