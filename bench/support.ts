import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { freePort } from "../tools/local/emulators";

/** The p-th percentile (0-100) of a sample, nearest-rank. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export interface ChildEmulator {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * Runs fauxqs in its own process, so that its CPU and memory are not counted in the
 * benchmarked code's figures.
 */
export async function startFauxqsProcess(): Promise<ChildEmulator> {
  const port = await freePort();
  const cli = fileURLToPath(new URL("../node_modules/fauxqs/dist/cli.js", import.meta.url));
  const child: ChildProcess = spawn(process.execPath, [cli], {
    env: { ...process.env, FAUXQS_PORT: String(port), FAUXQS_LOGGER: "false" },
    stdio: "ignore",
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${endpoint}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("fauxqs did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("exit", r));
    },
  };
}
