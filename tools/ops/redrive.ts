/** `npm run redrive -- [--queue events|recordings] [--stack <name>]`: DLQ → queue. */
import { Command } from "commander";
import { resolveTarget } from "../target";
import { redrive } from "./operations";

const o = new Command("redrive")
  .description("Move messages from a dead-letter queue back to its queue (local stack by default)")
  .option("--queue <name>", "events, recordings or all", "all")
  .option("--stack <name>", "a deployed stack's name")
  .parse()
  .opts<{ queue: string; stack?: string }>();

const target = await resolveTarget({ stack: o.stack });
try {
  for (const name of ["events", "recordings"] as const) {
    if (o.queue !== "all" && o.queue !== name) continue;
    const q = target.queues?.[name];
    if (!q?.deadLetterUrl) throw new Error(`no ${name} queue on this target`);
    console.log(
      `${name}: moved ${await redrive(target.sqs, q.deadLetterUrl, q.url)} message(s) from the DLQ back to the queue`,
    );
  }
} finally {
  target.destroy();
}
