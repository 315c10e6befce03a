import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_HEADER } from "../../tools/console/server";
import { freePort } from "../../tools/local/emulators";
import type { LocalStackInfo } from "../../tools/local/state";
import { waitForDrain } from "../../tools/simulate/run";
import { exited, killAll, type StartedProcess, startProcess } from "../support/local-process";

// The commands of the README and of the docs/ pages, as a new user pastes them into a terminal,
// on a fresh state directory: the README first, then the pages by name, on one stack.
const ROOT = new URL("../../", import.meta.url).pathname;
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join("docs", name)),
];

/**
 * The commands of a page's bash blocks that run against a local stack: continuation lines
 * joined, comments dropped; not the ones with placeholders (`<appId>`, `…`), nor install, start
 * and deploy (the test starts the stack itself), nor the synopses (`[--json]`).
 */
function pageCommands(markdown: string): { command: string; exit: number }[] {
  const blocks = [...markdown.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  return blocks
    .flatMap((block) => block.replace(/\\\n\s*/g, "").split("\n"))
    .map((line) => ({
      command: line.replace(/\s+#\s.*$/, "").trim(),
      // A command whose comment says "(exit N" answers N as written (`apps`: 1 is a finding, #58).
      exit: Number(/\s#\s.*\(exit (\d)\b/.exec(line)?.[1] ?? 0),
    }))
    .filter(({ command }) => /^(curl|npm run|npx webhook) /.test(command) && !/[<…[]/.test(command));
}

/** Seconds a simulation of the test delivers for at most (the docs' slowest asks for four minutes). */
const DELIVERY_SECONDS = 5;

/**
 * A command as the test runs it: on the test stack's port, and with a tenth of the events a
 * simulation asks for (a simulation without `--events` gets a tenth of the default, 2,000), so
 * the machine is not loaded for minutes, at a rate that delivers them within
 * `DELIVERY_SECONDS` (a slow rate is for a person to act during the traffic); every other
 * option as written.
 */
function scaled(command: string, port: number, filesPort = 8099): string {
  let c = command.replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`);
  if (c.includes(" simulate ")) {
    // The recordings' file server on a port of this run's: other files' simulations use 8099 (#56).
    if (!c.includes("--files-port")) c = `${c} --files-port ${filesPort}`;
    // A history over days (`--days`: the watchdog's demo) keeps its events as written: at a tenth,
    // an app's usual hours are too sparse for the watchdog to expect anything of it (#58's rule).
    if (/--days \d+/.test(c)) return c;
    c = /--events \d+/.test(c)
      ? c.replace(/--events (\d+)/, (_, n) => `--events ${Math.ceil(Number(n) / 10)}`)
      : `${c} --events 200`;
    const events = Number(/--events (\d+)/.exec(c)?.[1]);
    const rate = Math.ceil(events / DELIVERY_SECONDS);
    if (Number(/--rate (\d+)/.exec(c)?.[1] ?? 200) < rate)
      c = /--rate \d+/.test(c) ? c.replace(/--rate \d+/, `--rate ${rate}`) : `${c} --rate ${rate}`;
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

// One test per command (a test over 60 s makes vitest's worker RPC time out), in order, against
// one stack started as the README says, on a fresh state directory.
const dir = mkdtempSync(join(tmpdir(), "readme-"));
const env = { LOCAL_STATE_DIR: dir };
let port = 0;
let filesPort = 0;
let stack: StartedProcess | undefined;

beforeAll(async () => {
  port = await freePort();
  filesPort = await freePort();
  stack = await startProcess(dir, port, [], "npm");
}, 300_000);

afterAll(async () => {
  // Ctrl-C, as the terminal sends it: to npm start's whole process group.
  if (stack?.child.pid) {
    process.kill(-stack.child.pid, "SIGINT");
    await exited(stack.child);
  }
}, 60_000);

describe("the commands of the README and the docs, on a fresh state directory", () => {
  const byPage = PAGES.map((page) => ({
    page,
    commands: pageCommands(readFileSync(join(ROOT, page), "utf8")),
  }));
  const commands = byPage.flatMap(({ page, commands }) => commands.map((c) => ({ page, ...c })));

  it("are there: the README's quick start, and the pages' recipes", () => {
    expect(byPage[0]?.commands.length).toBeGreaterThan(8);
    expect(commands.filter((c) => c.page !== "README.md").length).toBeGreaterThan(0);
  });

  it("npm start serves the console on loopback at the address its banner prints", async () => {
    let url: string | undefined;
    for (let i = 0; i < 100 && !url; i++) {
      url = (JSON.parse(readFileSync(join(dir, "stack.json"), "utf8")) as LocalStackInfo).consoleUrl;
      if (!url) await new Promise((r) => setTimeout(r, 100));
    }
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    // stack.json is written before the banner is printed: wait for the banner too.
    await expect.poll(() => stack?.output(), { timeout: 20_000 }).toContain(`Console       ${url}`);
    const page = await fetch(url ?? "");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>Webhook console</title>");
    const overview = (await (
      await fetch(`${url}api/overview`, { headers: { [API_HEADER]: "1" } })
    ).json()) as {
      target: string;
    };
    expect(overview.target).toBe("local");
  });

  /** One command as a person types it (`exit`: what it answers as written); a failure names the command and ends with its output. */
  async function typed(page: string, written: string, exit: number) {
    const command = scaled(written, port, filesPort);
    const named = `${page}: ${command}`;
    if (command.includes("--serve-platform")) {
      // Serves the platform until Ctrl-C: its differences are the dropped presence only; each
      // reconcile command it prints works; then Ctrl-C (the recipe's next command checks again).
      const sim = shell(command, env);
      const listed = () => sim.output().match(/^\s+npm run reconcile -- .*$/gm) ?? [];
      // The list is printed after "Reconcile with:": wait until it has lines and stops growing.
      for (let i = 0; i < 1200 && !(sim.output().includes("Reconcile with:") && listed().length > 0); i++)
        await new Promise((r) => setTimeout(r, 100));
      for (let seen = -1; seen !== listed().length; ) {
        seen = listed().length;
        await new Promise((r) => setTimeout(r, 250));
      }
      const reconciles = listed();
      // The check's differences: its lines after "check: N difference(s):" (the summary above it
      // wraps its own lines with the same indent, #61).
      const checked = sim.output().split(/^check: \d+ difference\(s\):$/m)[1] ?? "";
      const differences =
        checked.match(/^ {2}\S.*$/gm)?.filter((l) => !/^\s+(npm run|npx webhook) /.test(l)) ?? [];
      const failed: string[] = [];
      for (const reconcile of reconciles) {
        const r = shell(reconcile.trim(), env);
        if ((await r.exit) !== 0) failed.push(`${reconcile.trim()}\n${r.output()}`);
      }
      if (sim.child.pid) process.kill(-sim.child.pid, "SIGINT");
      await sim.exit;
      expect(reconciles.length, named).toBeGreaterThan(0);
      expect(differences.length, named).toBeGreaterThan(0);
      expect(
        differences.filter((d) => !/should be (online|offline)$/.test(d)),
        named,
      ).toEqual([]);
      expect(failed, named).toEqual([]);
      return;
    }
    const run = shell(command, env);
    const code = await run.exit;
    expect(code, `${named}\n${run.output().slice(-1500)}`).toBe(exit);
    // A person reads the answer before typing the next command: the event is through by then.
    if (/^curl |webhook trigger /.test(command) && stack) await waitForDrain(stack.info, 120);
  }

  // One walk-through, in one test: each command builds on those before it (the quick start's
  // simulation is what the pages' recipes query), as a person types them in order; so the
  // commands are not tests of their own, which would read what another left (issue #56).
  it("each exits as written in order (0, or the exit its comment names): the README's quick start, then the pages' recipes", async () => {
    for (const { page, command, exit } of commands) await typed(page, command, exit);
  }, 1_200_000);
});
