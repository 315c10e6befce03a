import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { alive } from "../../tools/local/lock";
import { runProcess } from "./cli";

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
export async function runtimeClientEntry(): Promise<string> {
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
      const npm = await runProcess("npm", ["ci", "--no-audit", "--no-fund", "--loglevel", "error"], {
        cwd: CACHE,
        timeout: 600_000,
      });
      if (npm.status !== 0)
        throw new Error(
          `installing aws-lambda-ric 4.0.2 for the bundle check failed (its add-on builds with cmake, make and g++: apt-get install cmake g++ make):\n${`${npm.stdout}\n${npm.stderr}`.slice(-3000)}`,
        );
      writeFileSync(MARKER, pinHash());
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
  return ENTRY;
}

// `node --conditions=@webhook-backend/source --import tsx test/support/runtime-client.ts`: install it now (.ci/run, while lint runs).
if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await runtimeClientEntry());
