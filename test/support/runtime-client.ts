import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { alive } from "../../tools/local/lock";

// aws-lambda-ric (the runtime interface client of Lambda's Node images) builds its native add-on
// from the sources it ships, with cmake, make and g++: a minute or more of every user's
// `npm install` for one test file. So the project does not depend on it: the bundle check installs
// it on first use, pinned by its own lockfile (runtime-client/), into node_modules/.cache, where
// it stays until node_modules goes (issue #42, item 9).
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PINNED = fileURLToPath(new URL("./runtime-client/", import.meta.url));
const CACHE = join(ROOT, "node_modules/.cache/aws-lambda-ric");
const LOCK = `${CACHE}.lock`;
/** Written last, with the hash of the lockfile installed: a changed pin installs again. */
const MARKER = join(CACHE, "installed.sha256");
const ENTRY = join(CACHE, "node_modules/aws-lambda-ric/index.mjs");

const pinHash = () =>
  createHash("sha256")
    .update(readFileSync(join(PINNED, "package-lock.json")))
    .digest("hex");

/**
 * How long an install may take: about a minute on two quiet cores, over ten on two cores at load
 * 15, where the 600 s it had killed npm before it said anything (issue #56: "failed … :" and no
 * output). The test's hook allows a little more.
 */
export const INSTALL_TIMEOUT_MS = 1_500_000;
/** The build tools the add-on needs, and the ones missing here. */
const TOOLS = ["cmake", "make", "g++"];
const missingTools = () =>
  TOOLS.filter((tool) => !process.env.PATH?.split(":").some((dir) => dir && existsSync(join(dir, tool))));

/**
 * `npm ci` in `cwd`, in a process group of its own, killed whole at `timeout` (or when this
 * process is stopped). Killing npm alone (execFile's timeout) left its build running in the
 * processes it started, which held npm's output pipes: the answer came when that build ended, as
 * a failure with no output, while the lock was held (issue #56).
 */
function npmCi(cwd: string, timeout: number) {
  const child = spawn("npm", ["ci", "--no-audit", "--no-fund", "--loglevel", "error"], {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const result = {
    status: null as number | null,
    stdout: "",
    stderr: "",
    why: undefined as string | undefined,
  };
  child.stdout.on("data", (c: Buffer) => {
    result.stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    result.stderr += c.toString();
  });
  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const stopped = (signal: NodeJS.Signals) => {
    killGroup();
    process.kill(process.pid, signal);
  };
  process.once("exit", killGroup);
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, stopped);
  const timer = setTimeout(() => {
    result.why = `was stopped at its ${timeout / 1000} s timeout`;
    killGroup();
  }, timeout);
  return new Promise<typeof result>((resolve) => {
    child.once("error", (error) => {
      result.why = `could not start: ${error.message}`;
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      process.off("exit", killGroup);
      for (const name of ["SIGTERM", "SIGINT"] as const) process.off(name, stopped);
      result.status = code;
      result.why ??= signal ? `was killed by ${signal}, not by this check` : undefined;
      resolve(result);
    });
  });
}

/** Why npm ci failed, with what it wrote; the build tools' hint only when one of them is missing. */
function installFailure(npm: {
  status: number | null;
  stdout: string;
  stderr: string;
  why?: string;
}): string {
  const missing = missingTools();
  const output = `${npm.stdout}\n${npm.stderr}`.trim();
  return [
    `installing aws-lambda-ric 4.0.2 for the bundle check failed: npm ci ${npm.why ?? `exited with status ${npm.status}`}`,
    ...(missing.length
      ? [
          `its add-on builds with cmake, make and g++, and ${missing.join(", ")} is not on PATH (apt-get install cmake g++ make)`,
        ]
      : []),
    output ? `npm's output (its end):\n${output.slice(-3000)}` : "npm wrote nothing",
  ].join("\n");
}

const installed = () => existsSync(ENTRY) && existsSync(MARKER) && readFileSync(MARKER, "utf8") === pinHash();

/** Takes the install lock (a directory: mkdir is atomic), taking over one whose holder died. */
function tryLock(): boolean {
  mkdirSync(dirname(LOCK), { recursive: true });
  try {
    mkdirSync(LOCK);
    writeFileSync(join(LOCK, "pid"), String(process.pid));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    let holder = 0;
    try {
      holder = Number(readFileSync(join(LOCK, "pid"), "utf8"));
    } catch {
      // No pid yet (its holder is between mkdir and write), or just released: wait and look again.
    }
    if (holder && !alive(holder)) rmSync(LOCK, { recursive: true, force: true });
    return false;
  }
}

/**
 * The path of aws-lambda-ric's entry point (`index.mjs`), installed on first use: `npm ci` of the
 * pinned package.json and lockfile in test/support/runtime-client/, in node_modules/.cache.
 * Concurrent callers (two test workers, `.ci/run`'s build ahead of the tests) wait for one install.
 * Its add-on needs cmake, make and g++; a failed build throws with npm's output and that hint.
 *
 * @example
 * const ric = await runtimeClientEntry(); // …/node_modules/.cache/aws-lambda-ric/node_modules/aws-lambda-ric/index.mjs
 * spawn(process.execPath, [ric], { env: { AWS_LAMBDA_RUNTIME_API, _HANDLER: "index.handler" } });
 */
export async function runtimeClientEntry(timeout = INSTALL_TIMEOUT_MS): Promise<string> {
  while (!installed()) {
    if (!tryLock()) {
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    try {
      if (installed()) break;
      rmSync(CACHE, { recursive: true, force: true });
      mkdirSync(CACHE, { recursive: true });
      for (const file of ["package.json", "package-lock.json"])
        copyFileSync(join(PINNED, file), join(CACHE, file));
      const npm = await npmCi(CACHE, timeout);
      if (npm.status !== 0) throw new Error(installFailure(npm));
      writeFileSync(MARKER, pinHash());
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
  return ENTRY;
}

// `node --conditions=@webhook-backend/source --import tsx test/support/runtime-client.ts`: install it now (.ci/run,
// while lint runs), saying nothing unless it fails, and then why.
if (process.argv[1] === fileURLToPath(import.meta.url))
  await runtimeClientEntry().catch((error: Error) => {
    console.error(`the runtime client's background build: ${error.message}`);
    process.exitCode = 1;
  });
