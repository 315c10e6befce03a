import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { TEMPLATES_DIR } from "../../tools/simulate/templates";

/**
 * Fixtures: one base payload per trigger is the simulator's template
 * (`tools/simulate/templates/<trigger>.json`, one copy for the product and the tests); the
 * variants the schema tests need are `test/events/<trigger>.<variant>.json`.
 */
const EVENTS_DIR = fileURLToPath(new URL("../events/", import.meta.url));
const EXAMPLES_DIR = fileURLToPath(new URL("../examples/", import.meta.url));

/** The raw text of a fixture: `<trigger>` (a template) or `<trigger>.<variant>` (test/events). */
export function fixtureText(name: string): string {
  return readFileSync(`${name.includes(".") ? EVENTS_DIR : TEMPLATES_DIR}${name}.json`, "utf8");
}

/** A fresh copy of a fixture, safe to mutate. */
export function fixture<T = Loose>(name: string): T {
  return structuredClone(JSON.parse(fixtureText(name))) as T;
}

/** Shapes observed live by the platform's QA suite (`test/events/observed-live/README.md`). */
export const OBSERVED_LIVE = "observed-live";

/**
 * Every fixture: `{ name, trigger }` where the trigger is the file name up to its first dot;
 * `observed-live/<trigger>.<variant>` are the shapes the platform's QA suite saw live.
 */
export function allFixtures(): Array<{ name: string; trigger: string }> {
  return [
    ...readdirSync(TEMPLATES_DIR),
    ...readdirSync(EVENTS_DIR),
    ...readdirSync(`${EVENTS_DIR}${OBSERVED_LIVE}`).map((f) => `${OBSERVED_LIVE}/${f}`),
  ]
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -5))
    .sort()
    .map((name) => ({ name, trigger: name.split("/").at(-1)?.split(".")[0] ?? name }));
}

/** The fixtures of shapes observed live (`observed-live/…`). */
export function observedLiveFixtures(): Array<{ name: string; trigger: string }> {
  return allFixtures().filter((f) => f.name.startsWith(`${OBSERVED_LIVE}/`));
}

/** The platform's published examples in `test/examples/<dir>`: `{ file, json }`. */
export function publishedExamples(dir = ""): Array<{ file: string; json: unknown }> {
  const path = `${EXAMPLES_DIR}${dir}`;
  return readdirSync(path)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, json: JSON.parse(readFileSync(`${path}/${file}`, "utf8")) }));
}

/** A fixture as tests mutate it: any path, any value (the schemas are what judge it). */
// biome-ignore lint/suspicious/noExplicitAny: tests reach into fixtures by path on purpose.
export type Loose = Record<string, any>;

/** The body of a `group_member_added` of `appId` adding `uid` to group `guid` (a long uid: a key DynamoDB cannot hold). */
export function memberAddedBody(appId: string, guid: string, uid: string): string {
  const e = fixture("group_member_added");
  e.appId = appId;
  e.data.group.guid = guid;
  const [member] = Object.values(e.data.members) as Array<Record<string, unknown>>;
  e.data.members = { [uid]: { ...member, uid } };
  return JSON.stringify(e);
}
