import { closeSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Who holds a state directory: the stack's process, its port, and its DynamoDB Local. */
export interface StateLock {
  pid: number;
  port: number;
  dynamoPid?: number;
}

/** The lock's file name in the state directory. */
export const STATE_LOCK_FILE = "lock.json";

export class StateDirInUseError extends Error {
  override name = "StateDirInUseError";
}

/** Whether a process runs (a zombie, killed but not yet reaped, does not). */
export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    // /proc/<pid>/stat: "pid (name) state …"; Z is a zombie. Elsewhere than Linux, kill(0) alone.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false;
  } catch {
    // no /proc entry: gone on Linux, or not Linux (kill below decides)
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, but is someone else's.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readLock(file: string): StateLock | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as StateLock;
  } catch {
    return undefined;
  }
}

/**
 * Takes the state directory for one stack: a second `npm start` on it is refused, naming the
 * first one's port and pid. A lock left by a stack that was killed (`kill -9`, a crash) is taken
 * over, and the DynamoDB Local it left running on the same files is stopped first.
 *
 * @returns `record` (add the DynamoDB Local pid once known) and `release`
 */
export async function acquireStateLock(dir: string, port: number) {
  const file = join(dir, STATE_LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, port } satisfies StateLock));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw error;
      const held = readLock(file);
      if (held && held.pid !== process.pid && alive(held.pid))
        throw new StateDirInUseError(
          `${dir} is in use by another npm start (pid ${held.pid}, port ${held.port}): stop it (Ctrl-C in its terminal, or kill ${held.pid}), or start with another --state-dir`,
        );
      // Stale: its stack is gone. A DynamoDB Local it left behind would still hold the files.
      if (held?.dynamoPid && alive(held.dynamoPid)) {
        process.kill(held.dynamoPid, "SIGKILL");
        for (let i = 0; i < 100 && alive(held.dynamoPid); i++) await new Promise((r) => setTimeout(r, 50));
      }
      rmSync(file, { force: true });
    }
  }
  return {
    record(update: Partial<StateLock>) {
      writeFileSync(file, JSON.stringify({ pid: process.pid, port, ...readLock(file), ...update }), {
        mode: 0o600,
      });
    },
    release() {
      if (readLock(file)?.pid === process.pid) rmSync(file, { force: true });
    },
  };
}
