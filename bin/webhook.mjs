#!/usr/bin/env node
// `npx webhook <command> …`: the project's command-line tools without npm's own banner on stdout,
// so that `--json` output is pure JSON (`npm run <command>` prints npm's "> script" lines first).
// It runs on the Node that npx puts first on PATH: the project's node_modules/.bin/node (Node 24).
import { readFileSync } from "node:fs";
import { distance } from "fastest-levenshtein";
import { register } from "tsx/esm/api";

// Every command is one file in tools/commands/, named as it is typed.
const COMMANDS = Object.fromEntries(
  [
    "start",
    "simulate",
    "query",
    "redrive",
    "replay",
    "rederive",
    "reconcile",
    "resend",
    "rollup",
    "archive-migrate",
    "compact",
    "sql",
    "trigger",
    "events",
    "console",
    "connect",
    "rotate-credentials",
    "forget",
    "import",
    "listen",
    "verify",
  ].map((name) => [name, `../tools/commands/${name}.ts`]),
);

/**
 * The commands a mistyped one may have meant, as commander suggests for subcommands: within an
 * edit distance of 40% of its length (at least one edit), closest first.
 */
function similar(typed) {
  const ranked = Object.keys(COMMANDS)
    .map((name) => ({ name, edits: distance(typed, name) }))
    .filter(({ edits }) => edits <= Math.max(1, Math.floor(typed.length * 0.4)))
    .sort((a, b) => a.edits - b.edits);
  return ranked.filter(({ edits }) => edits === ranked[0]?.edits).map(({ name }) => name);
}

/** Words that are not commands here but are close to one: where what they ask for is. */
const ELSEWHERE = {
  deploy: "deploying is `npx cdk deploy` (docs/deploy.md)",
  test: "the tests are `npm test` (docs/tests.md)",
};

const [typed, ...args] = process.argv.slice(2);
// `webhook help <command>` is `webhook <command> --help`, as git and npm take it.
const [command, rest] = typed === "help" && args[0] !== undefined ? [args[0], ["--help"]] : [typed, args];
const entry = Object.hasOwn(COMMANDS, command ?? "") ? COMMANDS[command] : undefined;
if (!entry) {
  const usage = `usage: webhook <${Object.keys(COMMANDS).join("|")}> [options]  (webhook <command> --help)\n`;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(usage);
    process.exit(0);
  }
  if (command === "--version" || command === "-V") {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    process.stdout.write(`${version}\n`);
    process.exit(0);
  }
  const guesses = similar(command);
  const hint = Object.hasOwn(ELSEWHERE, command)
    ? `\n(${ELSEWHERE[command]})`
    : guesses.length
      ? `\n(Did you mean ${guesses.join(" or ")}?)`
      : "";
  process.stderr.write(`error: unknown command '${command}'${hint}\n${usage}`);
  process.exit(2);
}
process.argv = [process.argv[0], entry, ...rest];
register();
await import(new URL(entry, import.meta.url).href);
