import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { closest } from "fastest-levenshtein";

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

/**
 * Every path of a template, to its leaves and the objects on the way (`data`, `data.group`,
 * `data.group.name`…); an array's items are `path.0`, `path.1`…
 *
 * @example templatePaths({ data: { group: { name: "x" } } }) // ["data", "data.group", "data.group.name"]
 */
export function templatePaths(node: Template, prefix = ""): string[] {
  return Object.entries(node).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return value !== null && typeof value === "object" ? [path, ...templatePaths(value, path)] : [path];
  });
}

/**
 * Sets a field of a template by its path (`--set data.group.name=Climbers`): only a path the
 * template has, so that a mistyped one (`data.group.nmae`) is refused rather than sent as an
 * extra field the platform never sends. A path to an object replaces it whole.
 *
 * @throws Error naming the nearest path of the template: `data.group.nmae is not a field of the group_created template (did you mean data.group.name?)`
 */
export function setTemplatePath(trigger: string, event: Template, path: string, value: unknown): void {
  const paths = templatePaths(event);
  if (!paths.includes(path))
    throw new TemplatePathError(
      `${path} is not a field of the ${trigger} template (did you mean ${closest(path, paths)}?): --set changes the template's fields only (tools/simulate/templates/${trigger}.json)`,
    );
  const parts = path.split(".");
  let node: Template = event;
  for (const part of parts.slice(0, -1)) node = node[part];
  node[parts[parts.length - 1] as string] = value;
}

/** A `--set` path the template does not have. */
export class TemplatePathError extends Error {
  override name = "TemplatePathError";
}
