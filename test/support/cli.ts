import { spawn } from "node:child_process";
import { join } from "node:path";
import { runQueryCli } from "../../tools/query/commands";

const ROOT = new URL("../../", import.meta.url).pathname;

/** `npx webhook …` as a user runs it, in its own process (with `env` added to this one's). */
export async function webhookCli(args: readonly string[], env: Record<string, string> = {}) {
  const child = spawn(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/webhook.mjs"), ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stdout, stderr };
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
