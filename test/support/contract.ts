import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import Ajv, { type ValidateFunction } from "ajv";
import { bodySchemaPath, CONTRACT_DIR } from "../../tools/contract/stream-contract";

/** The committed contract's directory. */
export const CONTRACT_ROOT = join(new URL("../../", import.meta.url).pathname, CONTRACT_DIR);

/** Every file of the committed contract, by its path under `contract/stream/`, with its text. */
export function committedContract(): Map<string, string> {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : [relative(CONTRACT_ROOT, join(dir, e.name))],
    );
  return new Map(walk(CONTRACT_ROOT).map((path) => [path, readFileSync(join(CONTRACT_ROOT, path), "utf8")]));
}

/**
 * The committed JSON Schemas as a validator would load them (ajv, draft-07, strict): what a team
 * in another language checks a message against. `check` returns the errors (none: valid).
 */
export function contractValidator() {
  const ajv = new Ajv({ strict: true, allErrors: true });
  const compiled = new Map<string, ValidateFunction>();
  const schema = (path: string) => {
    let validate = compiled.get(path);
    if (!validate) {
      validate = ajv.compile(JSON.parse(readFileSync(join(CONTRACT_ROOT, path), "utf8")));
      compiled.set(path, validate);
    }
    return validate;
  };
  const check = (path: string, value: unknown): string[] => {
    const validate = schema(path);
    return validate(value)
      ? []
      : (validate.errors ?? []).map((e) => `${path}${e.instancePath}: ${e.message}`);
  };
  return {
    message: (value: unknown) => check("message.schema.json", value),
    attributes: (value: unknown) => check("attributes.schema.json", value),
    body: (trigger: string, value: unknown) => check(bodySchemaPath(trigger), value),
  };
}
