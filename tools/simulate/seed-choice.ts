/**
 * Which seed and apps a simulation runs with. Every key of the tables holds the app id, so a
 * history's ids are its apps' ids: a run whose apps already hold events in the stack is checked
 * against the union of two histories (a seed sent again at another time adds its call stints a
 * second time, for one), and its check reports differences that are no fault of the pipeline
 * (issue #42, item 10: the docs' `simulate --connect` after the quick start's seed 7).
 */

/** The seed a simulation runs with unless told otherwise. */
export const DEFAULT_SEED = 7;

/** How many later seeds are tried for one whose apps hold no events. */
const SEEDS_TRIED = 1000;

/**
 * The default apps of a seed: two named after it, so that runs with other seeds do not collide.
 *
 * @example
 * defaultSimulationApps(7); // ["sim-s7-a1", "sim-s7-a2"]
 */
export function defaultSimulationApps(seed: number): string[] {
  return [`sim-s${seed}-a1`, `sim-s${seed}-a2`];
}

export interface SeedChoice {
  seed: number;
  apps: string[];
  /** What was chosen and why, for the person running it (printed before anything is sent). */
  note?: string;
}

/**
 * The seed and apps of a run. Neither `--seed` nor `--apps` given, and the default seed's apps
 * already hold events: the first later seed whose apps hold none, so that the check sees only this
 * run (and the note says so). Given ones are kept as given, with a note when their apps hold events:
 * the check will show what the earlier run left. A check-only run checks the history it names.
 *
 * @example
 * chooseSeed({ seed: 7, seedGiven: false, hasEvents: (app) => app.startsWith("sim-s7-") });
 * // { seed: 8, apps: ["sim-s8-a1", "sim-s8-a2"], note: "seed 7's apps … seed 8 …" }
 */
export function chooseSeed(options: {
  seed: number;
  seedGiven: boolean;
  apps?: readonly string[];
  checkOnly?: boolean;
  hasEvents: (app: string) => boolean;
}): SeedChoice {
  const { seed, seedGiven, checkOnly, hasEvents } = options;
  const apps = options.apps ? [...options.apps] : defaultSimulationApps(seed);
  const taken = apps.filter(hasEvents);
  if (checkOnly || taken.length === 0) return { seed, apps };
  if (!seedGiven && !options.apps) {
    for (let next = seed + 1; next <= seed + SEEDS_TRIED; next++) {
      const fresh = defaultSimulationApps(next);
      if (!fresh.some(hasEvents))
        return {
          seed: next,
          apps: fresh,
          note: `seed ${seed}'s apps (${apps.join(", ")}) already hold events in this stack: simulating seed ${next} instead, so that the check sees only this run (--seed ${seed} sends seed ${seed} again)`,
        };
    }
  }
  return {
    seed,
    apps,
    note: `${taken.join(", ")} already ${taken.length === 1 ? "holds" : "hold"} events in this stack (an earlier run): the check compares the tables with this run's history alone, so what the earlier run left shows as differences; a seed of its own (leave out --seed and --apps) checks only this run`,
  };
}

/**
 * An app of this run named by its id, or by the end of it (`a2` for `sim-s8-a2`: the run's apps
 * are named after the seed it picks, which moves on as a stack fills: seed-choice.ts).
 *
 * @example runApp("a2", ["sim-s8-a1", "sim-s8-a2"]) // "sim-s8-a2"
 */
export function runApp(value: string, apps: readonly string[]): string | undefined {
  return apps.includes(value) ? value : apps.find((app) => app.endsWith(`-${value}`));
}
