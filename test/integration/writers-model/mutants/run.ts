/**
 * `npm run test:model:mutants -- [--runs <n>] [--seed <n>] [--only 4,8,9,10] [--steps <n>] [--ref <commit>] [--skip-fixed] [--keep]`:
 * whether the writers model's drawn runs (not the defects' fixed sequences) find each of issue
 * #50's ten defects with its fix reverted.
 *
 * For each mutant (`NN-short-name.patch` beside this file: the smallest change to the product that
 * brings defect NN back), one after another: a temporary git worktree of `--ref` (HEAD), its
 * node_modules a hard-linked copy of this tree's (the stream package linked into the worktree),
 * the patch applied (said when it no longer applies); the defect's fixed sequence
 * (writers-model-defects.int.test.ts, `-t "Defect NN:"`) must FAIL there, which shows the mutant
 * is the defect; then the drawn model in measure mode (MODEL_MEASURE=1, PROPERTY_RUNS, a seed):
 * in how many of the runs the defect's signature showed (measure.ts), and the first run that
 * found it. Each vitest starts its own emulators on free ports (test/global-setup.ts), so a run
 * shares nothing with another vitest on the machine. The full output of each vitest goes to the
 * log folder; a table at the end.
 */
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, InvalidArgumentError } from "commander";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../../../..");

interface Options {
  runs: number;
  seed: number;
  only?: number[];
  steps?: number;
  ref: string;
  skipFixed?: boolean;
  keep?: boolean;
  logs: string;
}

interface Outcome {
  mutant: string;
  defect: number;
  applies: boolean;
  fixedFails?: boolean;
  found?: number;
  runs?: number;
  firstRun?: string;
  note?: string;
}

const positive = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("a whole number");
  return n;
};
const defectList = (value: string) =>
  value.split(",").map((part) => {
    const n = Number(part.trim());
    if (!Number.isInteger(n) || n < 1 || n > 10)
      throw new InvalidArgumentError("defects 1 to 10, comma-separated");
    return n;
  });

function git(cwd: string, ...args: string[]): { ok: boolean; out: string } {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}`.trim() };
}

/** The process groups of the vitest runs under way, and the worktrees made: ended on an interrupt. */
const running = new Set<number>();
const made = new Set<string>();
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    for (const pid of running) if (pid) process.kill(-pid, "SIGTERM");
    // DynamoDB Local runs detached (a group of its own): ended by its pid, found by its worktree's path.
    const ps = spawnSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" }).stdout;
    for (const line of ps.split("\n"))
      if ([...made].some((dir) => line.includes(`${dir}/`)))
        process.kill(Number(line.trim().split(" ")[0]), "SIGTERM");
    for (const dir of made) removeWorktree(dir);
    process.exit(130);
  });

/** Runs a command in `cwd`, its output appended to `log`; resolves with its exit code and output. */
function runLogged(
  cwd: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  log: string,
): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    const file = createWriteStream(log, { flags: "a" });
    file.write(
      `\n$ ${Object.entries(env)
        .map(([k, v]) => `${k}=${v} `)
        .join("")}${command} ${args.join(" ")}\n`,
    );
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      // A process group of its own (vitest, its workers, its emulators): ended whole on an interrupt.
      detached: true,
    });
    running.add(child.pid ?? 0);
    let output = "";
    const take = (chunk: Buffer) => {
      output += chunk.toString();
      file.write(chunk);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("close", (code) => {
      running.delete(child.pid ?? 0);
      file.end(() => done({ code: code ?? 1, output }));
    });
  });
}

/** A worktree of `ref` with this tree's node_modules hard-linked, the stream package its own. */
function worktree(ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), "wm-mutant-"));
  const added = git(ROOT, "worktree", "add", "--detach", dir, ref);
  if (!added.ok) throw new Error(`git worktree add ${ref}: ${added.out}`);
  made.add(dir);
  const copied = spawnSync("cp", ["-al", join(ROOT, "node_modules"), join(dir, "node_modules")]);
  if (copied.status !== 0) throw new Error(`cp -al node_modules: ${copied.stderr}`);
  const stream = join(dir, "node_modules/@webhook-backend/stream");
  spawnSync("rm", ["-f", stream]);
  spawnSync("ln", ["-s", "../../packages/stream", stream]);
  return dir;
}

function removeWorktree(dir: string): void {
  spawnSync("rm", ["-rf", join(dir, "node_modules")]);
  git(ROOT, "worktree", "remove", "--force", dir);
  made.delete(dir);
}

/** The measure's figures of defect `n` in a vitest output: runs found, runs drawn, the first run. */
function measured(output: string, n: number): Pick<Outcome, "found" | "runs" | "firstRun"> {
  const runs = /(\d+) drawn runs of at most \d+ steps/.exec(output)?.[1];
  const found = new RegExp(`defect ${n} [^\\n]*?: found in (\\d+) run\\(s\\)`).exec(output)?.[1];
  const first = new RegExp(`first run finding ${n} [^:\\n]*: (run \\d+)[^:\\n]*: ([^\\n]*)`).exec(output);
  return {
    ...(found === undefined ? {} : { found: Number(found) }),
    ...(runs === undefined ? {} : { runs: Number(runs) }),
    ...(first ? { firstRun: `${first[1]}: ${first[2]?.slice(0, 300)}` } : {}),
  };
}

async function measureMutant(patch: string, o: Options): Promise<Outcome> {
  const mutant = patch.replace(/\.patch$/, "");
  const defect = Number(mutant.slice(0, 2));
  const log = join(o.logs, `${mutant}.log`);
  const dir = worktree(o.ref);
  try {
    const patchFile = join(HERE, patch);
    const check = git(dir, "apply", "--check", patchFile);
    if (!check.ok) {
      console.log(`${mutant}: the patch NO LONGER APPLIES to ${o.ref}: ${check.out.split("\n")[0]}`);
      return { mutant, defect, applies: false, note: check.out.split("\n")[0] };
    }
    git(dir, "apply", patchFile);
    const out: Outcome = { mutant, defect, applies: true };
    const vitest = join(dir, "node_modules/.bin/vitest");
    if (!o.skipFixed) {
      const fixed = await runLogged(
        dir,
        vitest,
        ["run", "test/integration/writers-model-defects.int.test.ts", "-t", `Defect ${defect}:`],
        { POWERTOOLS_METRICS_DISABLED: "true" },
        log,
      );
      out.fixedFails = fixed.code !== 0 && /Tests\s+1 failed/.test(fixed.output);
      console.log(
        `${mutant}: its fixed sequence ${out.fixedFails ? "FAILS (the mutant is the defect)" : `did not fail as expected (exit ${fixed.code}): see ${log}`}`,
      );
    }
    const env: Record<string, string> = {
      MODEL_MEASURE: "1",
      PROPERTY_RUNS: String(o.runs),
      PROPERTY_SEED: String(o.seed),
      POWERTOOLS_METRICS_DISABLED: "true",
      ...(o.steps ? { MODEL_MAX_STEPS: String(o.steps) } : {}),
    };
    const drawn = await runLogged(
      dir,
      vitest,
      ["run", "test/integration/writers-model.int.test.ts"],
      env,
      log,
    );
    Object.assign(out, measured(drawn.output, defect));
    if (drawn.code !== 0) out.note = `the measuring vitest exited ${drawn.code}: see ${log}`;
    console.log(
      `${mutant}: the drawn model found defect ${defect} in ${out.found ?? "?"} of ${out.runs ?? o.runs} runs${out.firstRun ? `, first in ${out.firstRun}` : ""}`,
    );
    return out;
  } finally {
    if (o.keep) console.log(`${mutant}: worktree kept at ${dir}`);
    else removeWorktree(dir);
  }
}

async function main(o: Options): Promise<void> {
  mkdirSync(o.logs, { recursive: true });
  const patches = readdirSync(HERE)
    .filter((f) => /^\d\d-.*\.patch$/.test(f))
    .filter((f) => !o.only || o.only.includes(Number(f.slice(0, 2))))
    .sort();
  if (!patches.length) throw new Error(`no mutant selected in ${HERE}`);
  if (!existsSync(join(ROOT, "node_modules"))) throw new Error(`${ROOT} has no node_modules`);
  const head = git(ROOT, "rev-parse", "--short", o.ref).out;
  console.log(
    `${patches.length} mutant(s) of ${o.ref} (${head}), ${o.runs} drawn run(s) each from seed ${o.seed}${o.steps ? `, at most ${o.steps} steps` : ""}; logs in ${o.logs}`,
  );
  const outcomes: Outcome[] = [];
  for (const patch of patches) outcomes.push(await measureMutant(patch, o));
  console.log("\n| mutant | fixed sequence fails | drawn runs finding it | first run finding it |");
  console.log("| --- | --- | --- | --- |");
  for (const r of outcomes)
    console.log(
      `| ${r.mutant} | ${!r.applies ? "patch no longer applies" : r.fixedFails === undefined ? "not run" : r.fixedFails ? "yes" : "NO"} | ${r.applies ? `${r.found ?? "?"} / ${r.runs ?? o.runs}` : "-"} | ${r.firstRun ?? r.note ?? "-"} |`,
    );
  const broken = outcomes.filter((r) => !r.applies || r.fixedFails === false);
  if (broken.length) process.exitCode = 1;
}

const program = new Command("test:model:mutants")
  .description(
    "whether the writers model's drawn runs find each of issue #50's defects with its fix reverted",
  )
  .option("--runs <n>", "drawn runs per mutant", positive, 40)
  .option("--seed <n>", "the seed the runs are drawn from", positive, 1)
  .option("--only <defects>", "only these defects' mutants (e.g. 4,8,9,10)", defectList)
  .option("--steps <n>", "at most this many steps a run (MODEL_MAX_STEPS; default the model's, 8)", positive)
  .option("--ref <commit>", "the commit each mutant is made from", "HEAD")
  .option("--skip-fixed", "do not check that the defect's fixed sequence fails on the mutant")
  .option("--keep", "keep each mutant's worktree")
  .option(
    "--logs <dir>",
    "where each mutant's vitest output goes",
    join(tmpdir(), `wm-mutants-${Date.now()}`),
  )
  .action((o: Options) => main(o));

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 2;
});
