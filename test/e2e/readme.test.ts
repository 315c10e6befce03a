import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../tools/local/emulators";
import { waitForDrain } from "../../tools/simulate/run";
import { exited, killAll, type StartedProcess, startProcess } from "../support/local-process";

// The README's commands, as a new user pastes them into a terminal, on a fresh state directory.
const ROOT = new URL("../../", import.meta.url).pathname;
const README = readFileSync(join(ROOT, "README.md"), "utf8");

/**
 * The commands of the README's bash blocks that run against a local stack: continuation lines
 * joined, comments dropped; not the ones with placeholders (`<appId>`, `…`), nor install, start
 * and deploy (the test starts the stack itself), nor the synopses (`[--json]`).
 */
function readmeCommands(): string[] {
  const blocks = [...README.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  return blocks
    .flatMap((block) => block.replace(/\\\n\s*/g, "").split("\n"))
    .map((line) => line.replace(/\s+#\s.*$/, "").trim())
    .filter((line) => /^(curl|npm run|npx webhook) /.test(line) && !/[<…[]/.test(line));
}

/**
 * A command as the test runs it: on the test stack's port, and with a tenth of the events a
 * simulation asks for (a simulation without `--events` gets a tenth of the default, 2,000), so
 * the machine is not loaded for minutes; every other option as written.
 */
function scaled(command: string, port: number): string {
  let c = command.replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`);
  if (c.includes(" simulate ")) {
    c = /--events \d+/.test(c)
      ? c.replace(/--events (\d+)/, (_, n) => `--events ${Math.ceil(Number(n) / 10)}`)
      : `${c} --events 200`;
  }
  return c;
}

const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) if (child.pid) process.kill(-child.pid, "SIGKILL");
  killAll();
});

function shell(command: string, env: Record<string, string>) {
  const child = spawn("bash", ["-c", command], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  running.add(child);
  let output = "";
  child.stdout.on("data", (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    output += c.toString();
  });
  const exit = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, exit, output: () => output };
}

describe("the README's commands", () => {
  it("work, in order, on a fresh state directory; the reconcile recipe's differences are its dropped presence only, and reconcile makes them right", async () => {
    const commands = readmeCommands();
    expect(commands.length).toBeGreaterThan(8);
    const dir = mkdtempSync(join(tmpdir(), "readme-"));
    const port = await freePort();
    const env = { LOCAL_STATE_DIR: dir };
    let stack: StartedProcess | undefined;
    try {
      stack = await startProcess(dir, port, [], "npm");
      const failed: string[] = [];
      for (const command of commands.map((c) => scaled(c, port))) {
        if (command.includes("--serve-platform")) {
          // Serves the platform until Ctrl-C: run each reconcile command it prints, then stop it.
          const sim = shell(command, env);
          for (let i = 0; i < 1200 && !sim.output().includes("Reconcile with:"); i++)
            await new Promise((r) => setTimeout(r, 100));
          await new Promise((r) => setTimeout(r, 500));
          const reconciles = sim.output().match(/^\s+npm run reconcile -- .*$/gm) ?? [];
          expect(reconciles.length).toBeGreaterThan(0);
          const differences =
            sim
              .output()
              .match(/^ {2}\S.*$/gm)
              ?.filter((l) => !l.includes("npm run")) ?? [];
          expect(differences.length).toBeGreaterThan(0);
          expect(differences.filter((d) => !/should be (online|offline)$/.test(d))).toEqual([]);
          for (const reconcile of reconciles) {
            const r = shell(reconcile.trim(), env);
            if ((await r.exit) !== 0) failed.push(`${reconcile.trim()}\n${r.output()}`);
          }
          if (sim.child.pid) process.kill(-sim.child.pid, "SIGINT");
          await sim.exit;
          continue;
        }
        const run = shell(command, env);
        const code = await run.exit;
        if (code !== 0) failed.push(`${command} → exit ${code}\n${run.output().slice(-1500)}`);
        // A person reads the answer before typing the next command: the event is through by then.
        if (/^curl |webhook trigger /.test(command)) await waitForDrain(stack.info, 60);
      }
      expect(failed).toEqual([]);
    } finally {
      // Ctrl-C, as the terminal sends it: to npm start's whole process group.
      if (stack?.child.pid) {
        process.kill(-stack.child.pid, "SIGINT");
        await exited(stack.child);
      }
    }
  }, 300_000);
});
