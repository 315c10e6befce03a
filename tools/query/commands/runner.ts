/**
 * The runner every query command's action goes through: it resolves the target (the local stack,
 * a deployed stack, or named tables), runs the query, prints its JSON, lines or table (data on
 * stdout, notes on stderr), and sets exit code 3 when nothing was found.
 */
import type { Command } from "commander";
import { documentClient } from "../../../shared/adapters/dynamo-item-store";
import { tableText } from "../../cli/format";
import { resolveTarget, type Target } from "../../target";
import { undeliveredAppText } from "../known-apps";
import { type AnalyticsQueries, analyticsQueries } from "../queries";
import type { Row } from "./helpers";

/** Where the CLI writes: stdout for results, stderr for everything else. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** What a query's action returns: its JSON, its table rows or its lines, and whether it found anything. */
export type QueryResult = { json: unknown; rows: Row[]; found?: boolean; lines?: string[] };
/** A query's action: what it reads through the queries or the target, given the options. */
export type QueryAction = (
  q: AnalyticsQueries,
  o: Record<string, unknown>,
  target: Target,
) => Promise<QueryResult>;
/** Wraps a query's action as a command action (`runner`). */
export type Run = (action: QueryAction) => (...args: unknown[]) => Promise<void>;

/**
 * The command action of a query: resolves the target, runs the query, prints its JSON, lines or
 * table, and sets exit code 3 when nothing was found (null, an empty list, an id found nowhere).
 */
export function runner(program: Command, io: Io, outcome: { exitCode: number }): Run {
  return (action) =>
    async (...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      const o = { ...program.opts(), ...command.opts() } as Record<string, unknown>;
      const target = await resolveTarget({
        stack: o.stack as string,
        tables: o.tables as string,
        stateDir: o.stateDir as string,
      });
      try {
        const { json, rows, found, lines } = await action(
          analyticsQueries(documentClient(target.dynamo), target.tables),
          { ...o, args: command.processedArgs },
          target,
        );
        const nothing = !(found ?? (json !== null && !(Array.isArray(json) && json.length === 0)));
        // Found nothing: what the text says of it (the rollup to run, where it looked) is a note,
        // on stderr with the message below: stdout holds data only, empty for a pipe; exit code 3.
        const text = nothing ? io.err : io.out;
        if (o.json) io.out(JSON.stringify(json, null, 2));
        else if (lines) for (const line of lines) text(line);
        else for (const line of tableText(rows, { wide: Boolean(o.wide) })) text(line);
        if (nothing) {
          // Nothing in an app that never delivered (a mistyped id): the one line says so, with the
          // nearest apps (#61 item 3); still the one rule for nothing found (stderr, exit 3).
          const undelivered =
            typeof o.app === "string"
              ? await undeliveredAppText(target, o.app, o.stateDir as string | undefined)
              : undefined;
          io.err(
            `nothing found: ${[command.name(), ...command.args].join(" ")}${o.app ? ` in app ${o.app}` : ""}${undelivered ? `: ${undelivered}` : ""}`,
          );
          outcome.exitCode = 3;
        } else if (!o.json && !lines && rows.length === 0) io.out("(no results)");
      } finally {
        target.destroy();
      }
    };
}
