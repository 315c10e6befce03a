import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { VERSION } from "../../tools/cli/program";

// The command-line tools as a user runs them (`npx webhook <command>`), each in its own process.
const ROOT = new URL("../../", import.meta.url).pathname;
const NO_STACK = mkdtempSync(join(tmpdir(), "no-stack-"));

/**
 * `npx webhook …` in its own process, awaited without blocking this worker: a synchronous spawn
 * holds the worker's event loop, and vitest's reports to its main process time out behind it on a
 * loaded machine (`Timeout calling "onTaskUpdate"`, #29).
 */
function webhook(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      join(ROOT, "node_modules/.bin/node"),
      [join(ROOT, "bin/webhook.mjs"), ...args],
      { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { ...process.env, LOCAL_STATE_DIR: NO_STACK } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const noStackTrace = (text: string) => expect(text).not.toMatch(/^\s+at /m);

describe("the command-line tools", () => {
  it.each(["start", "simulate", "query", "redrive", "replay", "trigger", "events"])(
    "%s --version prints the version",
    async (command) => {
      const { code, stdout } = await webhook(command, "--version");
      expect([code, stdout.trim()]).toEqual([0, VERSION]);
    },
  );

  it.each([
    [["simulate", "--events", "abc"], "--events"],
    [["simulate", "--rate", "0"], "--rate"],
    [["simulate", "--duplicates", "1.5"], "--duplicates"],
    [["start", "--port", "70000"], "--port"],
    [["start", "--retry-seconds", "0"], "--retry-seconds"],
    [["replay", "--from", "2026-13-01"], "--from"],
    [["redrive", "--queue", "foo"], "--queue"],
    [["query", "sessions", "--app", "a", "--from", "yesterday", "--to", "1"], "--from"],
    [["query", "nonsense"], "unknown command"],
    [["query", "sessions", "--app", "a", "--from", "2026-02-01", "--to", "2026-01-01"], "--from"],
    [["replay", "--from", "2026-02-01", "--to", "2026-01-01"], "--from"],
    [["reconcile", "--app", "a"], "--region"],
    [["replay", "--trigger", "group_craeted"], "group_created"],
    // #51 item 5: one vocabulary of trigger filters, a wrong one a usage error everywhere (listen's exited 1).
    [["replay", "--trigger", "grop:*"], 'did you mean "group:*"'],
    [["events", "--trigger", "group_craeted"], "group_created"],
    [["listen", "--trigger", "grop:*"], 'did you mean "group:*"'],
    [["replay", "--to-stream", "--delivery", "3c01ffb07048"], "<eventId>@<receivedAt>"],
    [["rollup", "--app", "a", "--from", "2025-11-14", "--to", "2025-11-13"], "--from"],
    [["sql", "SELECT 1", "--from", "2025-11-14", "--to", "2025-11-13"], "--from"],
    [["import", "groups", "groups.json", "--app", "a"], "group import"],
    [["import", "contacts", "c.json", "--app", "a"], "users"],
    [["import", "users", "u.json", "--app", "a", "--batch-size", "0"], "--batch-size"],
    // #41 (walk-5): a URL without its scheme, as stripe listen takes it, is answered with the one meant.
    [["listen", "--forward-to", "localhost:4000/hooks"], "as http://localhost:4000/hooks"],
  ])("refuses %j with one line naming %s and exit code 2", async (args, named) => {
    const { code, stderr } = await webhook(...args);
    expect(code).toBe(2);
    expect(stderr).toContain(named);
    expect(stderr.trim().split("\n")).toHaveLength(1);
  });

  it.each([["redrive"], ["replay"], ["query", "stats", "--json"], ["simulate", "--events", "5"]])(
    "%j without a running stack says so in one line, exit code 1, nothing on stdout but what it printed before",
    async (...args) => {
      const { code, stdout, stderr } = await webhook(...args);
      expect(code).toBe(1);
      expect(stderr).toMatch(/^error: no local stack is running in .*npm start/);
      noStackTrace(stderr);
      if (args.includes("--json")) expect(stdout).toBe("");
    },
  );

  // #42 (walk): `replay --to-stream --from today` was refused while `rollup` and `query activity`
  // took it: every day option takes `today` and `yesterday` (past parsing, no stack: exit code 1).
  it.each([
    [["replay", "--to-stream", "--app", "a", "--from", "yesterday", "--to", "today"]],
    [["rederive", "--from", "today", "--to", "today"]],
    [["sql", "SELECT 1", "--from", "yesterday", "--to", "today"]],
    [["resend", "0123456789ab", "--date", "today"]],
    [["query", "event", "0123456789ab", "--date", "yesterday"]],
    [["query", "quarantine", "--app", "a", "--date", "today"]],
  ])("%j takes today and yesterday as days", async (args) => {
    const { code, stderr } = await webhook(...args);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: no local stack is running/);
  });

  // #42 (walk): a second simulation while one runs found the recordings' port taken and printed a
  // stack trace (`Error: listen EADDRINUSE … 8099`).
  it("simulate whose recordings port is taken says so in one line, naming --files-port", async () => {
    const held = createServer();
    await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve));
    try {
      const port = (held.address() as AddressInfo).port;
      const { code, stderr } = await webhook(
        ...["simulate", "--events", "5", "--url", "http://127.0.0.1:9/webhook", "--no-check"],
        ...["--files-port", String(port)],
      );
      expect(code).toBe(1);
      expect(stderr).toContain(`error: port ${port} is already in use`);
      expect(stderr).toContain("--files-port <port>");
      noStackTrace(stderr);
    } finally {
      held.close();
    }
  });

  // #42 (walk): `npx webhook help` and `npx webhook --version` were unknown commands (exit code 2).
  it("help, help <command> and --version of the dispatcher answer as git and npm do", async () => {
    const usage = await webhook("help");
    expect([usage.code, usage.stdout]).toEqual([0, expect.stringMatching(/^usage: webhook <start\|/)]);
    const help = await webhook("help", "rollup");
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining("Usage: rollup [options]")]);
    const version = await webhook("--version");
    expect([version.code, version.stdout.trim()]).toEqual([0, VERSION]);
  });

  it("an unknown command of the dispatcher is a usage error", async () => {
    expect((await webhook("deploy")).code).toBe(2);
  });

  it.each([
    [["quary", "stats"], "(Did you mean query?)"],
    [["evnets"], "(Did you mean events?)"],
    [["deploy"], "(deploying is `npx cdk deploy` (docs/deploy.md))"],
  ])("a mistyped command %j suggests the one meant, as subcommands do (#42 item 5)", async (args, hint) => {
    const { code, stdout, stderr } = await webhook(...args);
    expect({ code, stdout }).toEqual({ code: 2, stdout: "" });
    expect(stderr.split("\n").slice(0, 2)).toEqual([`error: unknown command '${args[0]}'`, hint]);
  });
});
