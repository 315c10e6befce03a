import fc from "fast-check";
import type { Model } from "../../support/writers-model/model";
import { world } from "./arbitraries";
import { focusedRun } from "./focus";
import { athenaOf, MAX_STEPS, runModel } from "./runner";
import { quietScheduler } from "./step";

/*
 * What the drawn model finds (issue #50, "show it can fail"): `MODEL_MEASURE=1 PROPERTY_RUNS=n
 * npm run test:model` draws n runs as the suite does, keeps going past a violation, and counts in
 * how many runs each of the issue's ten defects showed, by its signature (what the invariants say
 * and the step that first said it); anything else is listed as found besides.
 */

/** Each defect's signature: a violation's text and the step that first showed it. */
const SIGNATURES: Array<{ defect: string; matches: (violation: string, step: string) => boolean }> = [
  {
    defect: "1 forget then rederive (marks, figures)",
    matches: (v, s) =>
      (/lost its erasure mark/.test(v) && /rederive/.test(s)) ||
      (/^figures of/.test(v) && /calls_audio|reactions_added|active_users|edited/.test(v)),
  },
  {
    defect: "2 a uid that prefixes another",
    matches: (v, s) =>
      (/names no erased user \([^)]*(john_doe|sam_b)[^)]*\) and was rewritten/.test(v) &&
        !/call_participant_joined/.test(v) &&
        /forget (john|sam) /.test(s)) ||
      /erased-[0-9a-f]+_(doe|b)\b/.test(v),
  },
  {
    defect: "3 resend of a redacted line",
    matches: (v, s) =>
      /^resend sent .* erasure redacted/.test(v) ||
      (/resend/.test(s) && /lost its erasure mark|is back/.test(v)),
  },
  {
    defect: "4 a lapsed lease taken back",
    matches: (v, s) => /lapse/.test(s) && /^imports\/.*names/.test(v),
  },
  {
    defect: "5 two rotations lose a credential",
    matches: (v) => /which the ingest refuses|reported retired and is still accepted/.test(v),
  },
  { defect: "6 a 5xx read as refused", matches: (v) => /never answered it 401/.test(v) },
  {
    defect: "7 a namesake's call lines",
    matches: (v) =>
      /call_participant_joined .* was rewritten/.test(v) && !/erased-[0-9a-f]+_(doe|b)\b/.test(v),
  },
  { defect: "8 the sweep changes a retained day", matches: (v) => /retention sweep changed/.test(v) },
  { defect: "9 an import key gives the uid back", matches: (v) => /^import key/.test(v) },
  {
    defect: "10 an orphan CTAS (Athena)",
    matches: (v) => /^compact\/.*(names|no compaction adopted)/.test(v),
  },
];

export interface Measurement {
  runs: number;
  /** Runs in which each defect showed. */
  found: Map<string, number>;
  /** Violations no signature claims, with a count of runs each (by its first 120 characters). */
  other: Map<string, number>;
  /** Runs that ended with an error (an operation's unexpected error). */
  errors: Map<string, number>;
  /** Each defect's first run: its seed and the steps' descriptions. */
  examples: Map<string, string>;
}

/** Draws `runs` runs (from `seed`), each kept going past its violations, and tallies what they found. */
export async function measureDrawnModel(runs: number, seed: number): Promise<Measurement> {
  const out: Measurement = {
    runs: 0,
    found: new Map(),
    other: new Map(),
    errors: new Map(),
    examples: new Map(),
  };
  const samples = fc.sample(fc.tuple(quietScheduler(), focusedRun(MAX_STEPS), world), {
    numRuns: runs,
    seed,
  });
  for (const [i, [scheduler, { focus, steps }, w]] of samples.entries()) {
    let model: Model | undefined;
    const athena = athenaOf(focus, w);
    const described = `[${focus.theme}: ${focus.uid} in ${focus.app}${athena ? ", Athena" : ""}] ${[...steps].map(String).join(" / ")}`;
    try {
      model = await runModel(scheduler, steps, w.seed, { measuring: true, athena });
    } catch (error) {
      const key = String(error instanceof Error ? `${error.name}: ${error.message}` : error).slice(0, 160);
      out.errors.set(key, (out.errors.get(key) ?? 0) + 1);
    }
    out.runs++;
    const defects = new Set<string>();
    const others = new Set<string>();
    for (const { violation, step: at } of model?.collected ?? []) {
      const signature = SIGNATURES.find((s) => s.matches(violation, at));
      if (signature) defects.add(signature.defect);
      else others.add(`${violation.replace(/[0-9a-f]{16,}/g, "…").slice(0, 140)} [at: ${at.slice(0, 80)}]`);
    }
    for (const d of defects) {
      out.found.set(d, (out.found.get(d) ?? 0) + 1);
      if (!out.examples.has(d)) out.examples.set(d, `run ${i} (sample seed ${seed}): ${described}`);
    }
    for (const o of others) out.other.set(o, (out.other.get(o) ?? 0) + 1);
    console.error(
      `run ${i + 1}/${runs}: ${[...defects].join("; ") || "no defect"}${others.size ? ` (+${others.size} other)` : ""}`,
    );
  }
  return out;
}

/** The measurement as lines: each defect with its runs, then what else was found. */
export function measurementLines(m: Measurement): string[] {
  return [
    `${m.runs} drawn runs of at most ${MAX_STEPS} steps`,
    ...SIGNATURES.map((s) => `defect ${s.defect}: found in ${m.found.get(s.defect) ?? 0} run(s)`),
    ...[...m.examples].map(([d, e]) => `  first run finding ${d}: ${e.slice(0, 400)}`),
    ...[...m.other].map(([v, n]) => `other (${n} run(s)): ${v}`),
    ...[...m.errors].map(([e, n]) => `error (${n} run(s)): ${e}`),
  ];
}
