import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The simulator builds deliveries from one payload per trigger (`tools/simulate/templates/<trigger>.json`,
 * shaped like the platform's published examples). The tests use the same files as their base
 * fixtures; the simulator reads nothing of the tests'. Each call returns a fresh copy.
 */
export const TEMPLATES_DIR = fileURLToPath(new URL("./templates/", import.meta.url));
const DIR = TEMPLATES_DIR;
// biome-ignore lint/suspicious/noExplicitAny: templates are filled in by path.
export type Template = Record<string, any>;

const cache = new Map<string, string>();
for (const file of readdirSync(DIR)) {
  if (/^[a-z_]+\.json$/.test(file)) cache.set(file.slice(0, -5), readFileSync(`${DIR}${file}`, "utf8"));
}

export function template(trigger: string): Template {
  const text = cache.get(trigger);
  if (!text) throw new Error(`no fixture for ${trigger}`);
  return JSON.parse(text) as Template;
}

/** The triggers there is a template for. */
export function templateTriggers(): string[] {
  return [...cache.keys()].sort();
}
