#!/usr/bin/env node
// `npx webhook <command> …`: the project's command-line tools without npm's own banner on stdout,
// so that `--json` output is pure JSON (`npm run <command>` prints npm's "> script" lines first).
// It runs on the Node that npx puts first on PATH: the project's node_modules/.bin/node (Node 24).
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
    "listen",
  ].map((name) => [name, `../tools/commands/${name}.ts`]),
);

const [command, ...rest] = process.argv.slice(2);
const entry = COMMANDS[command ?? ""];
if (!entry) {
  process.stderr.write(
    `usage: webhook <${Object.keys(COMMANDS).join("|")}> [options]  (webhook <command> --help)\n`,
  );
  process.exit(command === undefined || command === "--help" ? 0 : 2);
}
process.argv = [process.argv[0], entry, ...rest];
register();
await import(new URL(entry, import.meta.url).href);
