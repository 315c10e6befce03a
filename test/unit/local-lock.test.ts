import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../tools/local/emulators";
import { STATE_LOCK_FILE, StateDirInUseError } from "../../tools/local/lock";
import { startLocalStack } from "../../tools/local/stack";
import { PortInUseError } from "../../tools/local/stack-state-dir";

// A second `npm start` is refused before it starts anything: no emulator is needed. The first
// stack is played by what it leaves behind: its lock (with the pid of a live process) and its port.
let first: ChildProcess | undefined;
let listener: Server | undefined;
afterEach(async () => {
  first?.kill("SIGKILL");
  await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
  first = undefined;
  listener = undefined;
});

async function holdPort(port: number): Promise<void> {
  listener = createServer();
  const server = listener;
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
}

describe("a second npm start", () => {
  it("on the same state directory and port names the first one's pid and port (the port is the first one's)", async () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), "lock-unit-"));
    const port = await freePort();
    first = spawn("sleep", ["60"], { stdio: "ignore" });
    const pid = first.pid ?? 0;
    writeFileSync(join(dir, STATE_LOCK_FILE), JSON.stringify({ pid, port }));
    writeFileSync(join(dir, "stats.json"), "{}");
    await holdPort(port);

    // Act
    const second = startLocalStack({ port, stateDir: dir, clean: true, logMode: "silent" });

    // Assess: refused by the lock, not by the port; --clean removed nothing of the first's
    await expect(second).rejects.toThrow(StateDirInUseError);
    await expect(second).rejects.toThrow(`in use by another npm start (pid ${pid}, port ${port})`);
    expect(JSON.parse(readFileSync(join(dir, STATE_LOCK_FILE), "utf8"))).toEqual({ pid, port });
    expect(existsSync(join(dir, "stats.json"))).toBe(true);
  });

  it("on a port something else holds says the port is in use, and leaves no lock behind", async () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), "lock-unit-"));
    const port = await freePort();
    await holdPort(port);

    // Act
    const start = startLocalStack({ port, stateDir: dir, logMode: "silent" });

    // Assess
    await expect(start).rejects.toThrow(PortInUseError);
    await expect(start).rejects.toThrow(`port ${port} is already in use`);
    expect(existsSync(join(dir, STATE_LOCK_FILE))).toBe(false);
  });
});
