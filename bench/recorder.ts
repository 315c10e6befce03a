/**
 * npm run bench:recorder — archives a generated 1 GiB recording from a local file server (its own
 * process) through the recorder into fauxqs's S3 (its own process); in the same run, a raw copy of
 * the same bytes from the server to /dev/null. Prints peak RSS and throughput of both.
 */
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand } from "@aws-sdk/client-s3";
import { parseWebhookEvent } from "@webhook-backend/stream/events/schemas";
import { projectionInput } from "@webhook-backend/stream/fold";
import { appKey } from "@webhook-backend/stream/projections/keys";
import { evolveSession, type SessionState } from "@webhook-backend/stream/projections/sessions";
import { build } from "esbuild";
import { lambdaBuildOptions } from "../infra/bundling";
import { documentClient, dynamoItemStore } from "../shared/adapters/dynamo-item-store";
import { SESSIONS_TABLE } from "../shared/platform/tables";
import { emulatorClients } from "../tools/local/clients";
import { startDynamoDbLocal } from "../tools/local/emulators";
import { createProjectionTables, localTableNames } from "../tools/local/provision";
import { template } from "../tools/simulate/templates";
import { startFauxqsProcess } from "./support";

const BYTES = Number(process.env.BENCH_BYTES ?? 1024 ** 3);
const MB = 1024 * 1024;

async function startFileServerProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@webhook-backend/source",
      "--import",
      "tsx",
      fileURLToPath(new URL("../tools/commands/serve-files.ts", import.meta.url)),
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout?.once("data", (d: Buffer) => resolve(d.toString()));
    child.once("exit", (code) => reject(new Error(`file server exited ${code}`)));
  });
  return {
    url: (JSON.parse(line) as { url: string }).url,
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}

/** Bundles the worker as the CDK bundles a function, and runs it in a fresh node process. */
async function runWorker(args: string[]): Promise<{ bytes: number; seconds: number; peakRssMb: number }> {
  const outfile = join(tmpdir(), "bench-recorder-worker.mjs");
  await build({
    ...lambdaBuildOptions(fileURLToPath(new URL("./recorder-worker.ts", import.meta.url))),
    outfile,
  });
  const child = spawn(process.execPath, [outfile, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise((r) => child.once("exit", r));
  if (code !== 0) throw new Error(`worker exited ${code}`);
  return JSON.parse(out.trim().split("\n").pop() ?? "{}");
}

async function main() {
  const [files, fauxqs, dynamoLocal] = await Promise.all([
    startFileServerProcess(),
    startFauxqsProcess(),
    startDynamoDbLocal(),
  ]);
  const { s3, dynamo } = emulatorClients({ aws: fauxqs.endpoint, dynamodb: dynamoLocal.endpoint });
  try {
    const names = localTableNames("bench");
    await createProjectionTables(dynamo, names);
    await s3.send(new CreateBucketCommand({ Bucket: "bench" }));
    const sessions = dynamoItemStore<SessionState>(documentClient(dynamo), SESSIONS_TABLE, names.sessions);
    const path = `/recordings/bench-${BYTES}.mp4`;
    const event = template("recording_generated");
    event.appId = "bench";
    event.data.recording_url = `${files.url}${path}`;
    const parsed = parseWebhookEvent(event);
    if (parsed.kind !== "known") throw new Error("bad template");
    const sessionId = event.data.sessionId as string;
    await sessions.apply({ pk: appKey("bench", sessionId) }, (s) =>
      evolveSession(s, projectionInput(parsed.event, "bench", Date.now()) as never, sessionId),
    );
    const job = {
      appId: "bench",
      sessionId,
      startTime: event.data.startTime,
      recordingDate: event.data.recordingDate,
      recordingUrl: event.data.recording_url,
      eventId: "bench",
    };
    const fileUrl = `${files.url}${path}`;
    const raw = await runWorker(["raw", fileUrl]);
    const recorded = await runWorker([
      "recorder",
      fileUrl,
      fauxqs.endpoint,
      dynamoLocal.endpoint,
      names.sessions,
      JSON.stringify(job),
    ]);
    const bare = await runWorker(["upload", String(BYTES), fauxqs.endpoint]);
    const rawThroughput = raw.bytes / MB / raw.seconds;
    const recThroughput = recorded.bytes / MB / recorded.seconds;
    console.log(
      `${(BYTES / 1024 ** 3).toFixed(2)} GiB from a local file server; S3 is fauxqs; each in its own process.`,
    );
    console.log(
      "Each measured run is a bundled worker (as deployed) in a fresh node process; peak RSS is its maxRSS.",
    );
    console.table([
      {
        run: "raw copy to /dev/null",
        seconds: raw.seconds.toFixed(1),
        "MiB/s": rawThroughput.toFixed(0),
        "peak RSS MB": raw.peakRssMb.toFixed(0),
      },
      {
        run: "bare Upload of generated bytes (the emulator's ceiling)",
        seconds: bare.seconds.toFixed(1),
        "MiB/s": (bare.bytes / MB / bare.seconds).toFixed(0),
        "peak RSS MB": bare.peakRssMb.toFixed(0),
      },
      {
        run: "recorder → S3 (multipart)",
        seconds: recorded.seconds.toFixed(1),
        "MiB/s": recThroughput.toFixed(0),
        "peak RSS MB": recorded.peakRssMb.toFixed(0),
      },
    ]);
    console.log(
      `throughput ratio recorder/raw: ${(recThroughput / rawThroughput).toFixed(2)} (target ≥ 0.8); recorder/bare Upload: ${(recThroughput / (bare.bytes / MB / bare.seconds)).toFixed(2)}; recorder peak RSS ${recorded.peakRssMb.toFixed(0)} MB (target < 160 MB)`,
    );
  } finally {
    s3.destroy();
    dynamo.destroy();
    await Promise.all([files.stop(), fauxqs.stop(), dynamoLocal.stop()]);
  }
}

await main();
