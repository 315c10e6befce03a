/**
 * The local stack's state directory, the first step of a start: its lock (one stack per
 * directory) and the port checked free, `--clean`, the emulators started on their persistence
 * under it (or in memory), and the counters' ledger the functions' log lines are written through to.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { type RunningEmulator, startDynamoDbLocal, startFauxqsEmulator } from "./emulators";
import { FLOW_WINDOW_SECONDS } from "./flow";
import { acquireStateLock, STATE_LOCK_FILE } from "./lock";
import { stackLog, tapFunctionLogs } from "./log-tap";
import { appendRefusal } from "./refusals";
import type { LocalStackOptions } from "./stack-options";
import { appendLedger, compactStats, resetStats } from "./state";

export class PortInUseError extends Error {
  override name = "PortInUseError";
}

async function assertPortFree(port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new PortInUseError(
              `port ${port} is already in use: stop what runs there, or start on another with PORT=<port> npm start`,
            )
          : error,
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** `--clean`: everything in the state directory but the lock this start holds. */
function emptyStateDir(dir: string): void {
  for (const entry of readdirSync(dir))
    if (entry !== STATE_LOCK_FILE) rmSync(join(dir, entry), { recursive: true, force: true });
}

/**
 * The state directory's lock, first: a second start on this state directory is refused naming the
 * first one's pid and port, even when it asks for the same port (which is then taken by that
 * first one). Then the port, and `--clean`.
 */
export async function lockStateDir(options: LocalStackOptions, host: string) {
  mkdirSync(options.stateDir, { recursive: true });
  const lock = await acquireStateLock(options.stateDir, options.port);
  try {
    await assertPortFree(options.port, host);
  } catch (error) {
    lock.release();
    throw error;
  }
  if (options.clean) emptyStateDir(options.stateDir);
  return lock;
}

/** The emulators, each on its own persistence under the state directory (or in memory). */
export async function startEmulators(options: LocalStackOptions, started: RunningEmulator[]) {
  const dir = options.stateDir;
  const persist = (name: string) => {
    if (options.inMemory) return undefined;
    mkdirSync(join(dir, name), { recursive: true });
    return join(dir, name);
  };
  const track = (e: RunningEmulator) => {
    started.push(e);
    return e;
  };
  return Promise.all([
    startDynamoDbLocal({ port: options.dynamoPort, dbPath: persist("dynamodb") }).then(track),
    startFauxqsEmulator({
      port: options.fauxqsPort,
      dataDir: persist("fauxqs"),
      s3StorageDir: persist("s3"),
    }).then(track),
  ]);
}

/**
 * The counters' ledger: carried on from the last run (`stats` survives restarts), written through
 * by the functions' log lines. The last 15 minutes stay in it: the console's live flow spans a
 * restart. Returns what stops the tap.
 */
export function openLedger(options: LocalStackOptions): () => Promise<void> {
  if (options.inMemory) resetStats(options.stateDir);
  else compactStats(options.stateDir, Date.now() - FLOW_WINDOW_SECONDS * 1000);
  // Every line of the functions in the state directory's log, whatever the terminal shows (none in memory).
  const log = options.inMemory ? undefined : stackLog(options.stateDir);
  const untap = tapFunctionLogs({
    mode: options.logMode ?? "readable",
    count: (entry) => {
      appendLedger(options.stateDir, entry);
      options.status?.count(entry);
    },
    log: log && ((line) => log.write(line)),
    terminal: options.status?.terminal,
    refused: (username, at) => appendRefusal(options.stateDir, username, at),
  });
  return async () => {
    untap();
    await log?.close();
  };
}
