/** `npm run query -- <command>`: see `runQueryCli` and the README. */
import { runQueryCli } from "../query/commands/cli";

process.exitCode = await runQueryCli(process.argv.slice(2));
