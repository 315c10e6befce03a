/**
 * `npx webhook listen [--app <appId>…] [--trigger <trigger>…] [--json] [--forward-to <url>] [--stack <name>]`:
 * the stream of facts (#41) on this terminal while a consumer is written: a temporary queue
 * subscribed to the local (or deployed) topic with the filter, one line per delivery (`--json`:
 * the envelope), each POSTed to a local endpoint with `--forward-to`. Ctrl-C removes the queue
 * and its subscription (docs/stream.md: what it needs, the IAM with `--stack`).
 */
import { Command, InvalidArgumentError } from "commander";
import { filterPolicyOf } from "../../shared/stream/subscribers";
import { triggerForm } from "../cli/filters";
import { runProgram, UserFacingError, withTarget } from "../cli/program";
import { openListener, receiveUntilAborted, stopOnSignals } from "../ops/listen";
import { undeliveredAppText } from "../query/known-apps";
import { resolveTarget } from "../target";

interface ListenCliOptions {
  app?: string[];
  trigger?: string[];
  json?: boolean;
  forwardTo?: string;
  stack?: string;
  stateDir?: string;
}

/** An http(s) URL to forward to. */
function endpoint(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("expected a URL, as http://localhost:4000/path.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    // `localhost:4000/hooks` parses as a URL of scheme `localhost:`: say what was meant.
    throw new InvalidArgumentError(
      `expected an http:// or https:// URL${value.includes("://") ? "" : `, as http://${value}`}.`,
    );
  return url.href;
}

const many = (value: string, previous: string[] = []) => [...previous, value];

async function run(o: ListenCliOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  const err = (line: string) => process.stderr.write(`${line}\n`);
  try {
    // A mistyped app would listen to nothing, silently: name the nearest apps (it may be one yet to deliver).
    for (const appId of o.app ?? []) {
      const unknown = await undeliveredAppText(target, appId, o.stateDir);
      if (unknown) err(`warning: ${unknown}: listening for it anyway`);
    }
    if (!target.stream)
      throw new UserFacingError(
        target.kind === "local"
          ? "this local stack has no stream: restart it (npm start) with this version"
          : "the stack has no stream topic (deployed before #41?): deploy it again",
      );
    if (!target.appsTable) throw new UserFacingError("the target has no apps table (the listener switch)");
    const filter = filterPolicyOf({ name: "listen", apps: o.app, triggers: o.trigger });
    const listener = await openListener(
      target,
      { topicArn: target.stream.topicArn, appsTable: target.appsTable },
      filter,
    );
    const queueName = listener.queueUrl.split("/").pop();
    const stop = stopOnSignals(
      process,
      `Stopping: removing the queue ${queueName} and its subscription…`,
      `Still removing the queue ${queueName} (a moment): it stops by itself once it is gone.`,
      err,
    );
    err(
      `Listening to ${target.stream.topicArn} (${[
        o.app?.length ? `apps ${o.app.join(", ")}` : "every app",
        o.trigger?.length ? `triggers ${o.trigger.join(", ")}` : "every trigger",
      ].join("; ")}).`,
    );
    if (o.forwardTo) err(`Forwarding each message to ${o.forwardTo}.`);
    err(
      `${target.kind === "local" ? "Deliveries come as they are projected" : "Deliveries come within a minute (the projector reads the listener switch once a minute)"}; Ctrl-C stops and removes the queue ${queueName}.${listener.cleaned ? ` (Removed ${listener.cleaned} left by an earlier listen.)` : ""}`,
    );
    try {
      await receiveUntilAborted(target.sqs, listener, {
        json: o.json,
        forwardTo: o.forwardTo,
        stack: o.stack,
        waitSeconds: target.kind === "local" ? 1 : 10,
        out: (line) => process.stdout.write(`${line}\n`),
        err,
        signal: stop.signal,
      });
    } finally {
      await listener.close();
      stop.dispose();
      err("Stopped: the queue and its subscription are removed (publishing stops within minutes).");
    }
  } finally {
    target.destroy();
  }
}

const program = withTarget(
  new Command("listen")
    .description(
      "Print the stream of facts as it flows (local stack by default), one line per delivery; forward each to a local endpoint with --forward-to",
    )
    .option("--app <appId>", "only this app (repeatable)", many)
    .option(
      "--trigger <trigger>",
      "only this trigger: a name, family:* or a prefix* (repeatable)",
      triggerForm,
    )
    .option("--json", "each message as its JSON envelope, one per line")
    .option(
      "--forward-to <url>",
      "POST each message to this URL (retried on no answer, 5xx and 429)",
      endpoint,
    ),
).action((o: ListenCliOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
