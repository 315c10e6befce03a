import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The simulator builds deliveries from the test fixtures (`test/events/<trigger>.json`): the same
 * payload shapes every test uses. Each call returns a fresh copy.
 */
const DIR = fileURLToPath(new URL("../../test/events/", import.meta.url));
// biome-ignore lint/suspicious/noExplicitAny: templates are filled in by path.
export type Template = Record<string, any>;

const cache = new Map<string, string>();
// Only `<trigger>.json`: the variants (`<trigger>.<variant>.json`) are for the schema tests.
for (const file of readdirSync(DIR)) {
  if (/^[a-z_]+\.json$/.test(file)) cache.set(file.slice(0, -5), readFileSync(`${DIR}${file}`, "utf8"));
}

export function template(trigger: string): Template {
  const text = cache.get(trigger);
  if (!text) throw new Error(`no fixture for ${trigger}`);
  return JSON.parse(text) as Template;
}
