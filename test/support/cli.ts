import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { runQueryCli } from "../../tools/query/commands/cli";

const ROOT = new URL("../../", import.meta.url).pathname;

/** `npx webhook …` started in its own process (with `env` added to this one's), and what it wrote so far. */
export function spawnWebhook(args: readonly string[], env: Record<string, string> = {}) {
  const child = spawn(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/webhook.mjs"), ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const written = { stdout: "", stderr: "" };
  child.stdout.on("data", (c: Buffer) => {
    written.stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    written.stderr += c.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { child, written, exit };
}

/** `npx webhook …` as a user runs it, in its own process: its exit code and what it wrote. */
export async function webhookCli(args: readonly string[], env: Record<string, string> = {}) {
  const { written, exit } = spawnWebhook(args, env);
  const code = await exit;
  return { code, ...written };
}

/** The query CLI in this process against the local stack of `dir`: its exit code and what it wrote. */
export async function queryIn(dir: string, args: readonly string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runQueryCli([...args, "--state-dir", dir], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/**
 * A command run to its exit, awaited (not `spawnSync`: a worker blocked for long delays vitest's
 * reports to its main process, which fails a run under load): its exit status and output.
 */
export function runProcess(
  file: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeout?: number } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { ...options, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error && typeof error.code === "number" ? error.code : error ? null : 0;
        resolve({ status: code, stdout, stderr });
      },
    );
  });
}
