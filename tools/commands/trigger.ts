/**
 * `npx webhook trigger <trigger> [--app <appId>] [--set <path>=<value> …] [--url <url>]`: posts one
 * event, built from its template (`tools/simulate/templates/<trigger>.json`), to the running local
 * stack, or to any webhook URL with credentials (`--url`, `WEBHOOK_USERNAME`/`WEBHOOK_PASSWORD`).
 */
import { Command, InvalidArgumentError } from "commander";
import { closest } from "fastest-levenshtein";
import { basicAuthorization } from "../../shared/ingest/credentials";
import { shortId } from "../cli/event-id";
import { runProgram, UsageError, UserFacingError } from "../cli/program";
import { emulatorClients } from "../local/clients";
import { readStackInfo, stateDir } from "../local/state";
import { queueDepth } from "../ops/queues";
import { postThenWait } from "../ops/trigger-wait";
import { setTemplatePath, TemplatePathError, template, templateTriggers } from "../simulate/templates";

interface TriggerOptions {
  app?: string;
  /** commander's --no-wait: false when given. */
  wait: boolean;
  set: Array<[string, unknown]>;
  url?: string;
  stateDir?: string;
  json?: boolean;
}

/** A trigger there is a template for; anything else names the closest one. */
function withTemplate(value: string): string {
  const triggers = templateTriggers();
  if (!triggers.includes(value))
    throw new InvalidArgumentError(
      `no template for "${value}" (did you mean "${closest(value, triggers)}"?)`,
    );
  return value;
}

/** `path=value` (repeatable): the value as JSON when it parses (numbers, true, objects), else as text. */
function assignment(value: string, previous: Array<[string, unknown]> = []): Array<[string, unknown]> {
  const at = value.indexOf("=");
  const path = value.slice(0, at);
  if (at <= 0 || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(path))
    throw new InvalidArgumentError(
      `expected <path>=<value>, such as data.group.name=Climbers, not "${value}".`,
    );
  const text = value.slice(at + 1);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Text as it is.
  }
  return [...previous, [path, parsed]];
}

async function run(trigger: string, o: TriggerOptions): Promise<void> {
  const event = template(trigger);
  if (o.app) event.appId = o.app;
  for (const [path, value] of o.set)
    try {
      setTemplatePath(trigger, event, path, value);
    } catch (error) {
      if (error instanceof TemplatePathError) throw new UsageError(error.message);
      throw error;
    }
  const local = o.url ? undefined : readStackInfo(stateDir(o.stateDir));
  const url = o.url ?? local?.webhookUrl ?? "";
  const username = process.env.WEBHOOK_USERNAME?.trim() || local?.credentials.username;
  const password = process.env.WEBHOOK_PASSWORD?.trim() || local?.credentials.password;
  if (!username || !password)
    throw new UserFacingError(
      "--url needs the webhook's credentials in WEBHOOK_USERNAME and WEBHOOK_PASSWORD",
    );
  // The local stack: return once the event is projected (its queue empty), so that the `events`
  // and `query` typed next find it; a queue still busy after WAIT_MS says it is still in flight.
  const clients = local && o.wait ? emulatorClients(local.endpoints) : undefined;
  const { eventId, projected, status } = await postThenWait(
    async () => {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          authorization: basicAuthorization(username, password),
          "content-type": "application/json",
        },
        body: JSON.stringify(event),
      });
      const answer = (await response.json().catch(() => ({}))) as { eventId?: string; message?: string };
      if (!response.ok)
        throw new UserFacingError(
          `${url} answered ${response.status}: ${answer.message ?? response.statusText}`,
        );
      return { eventId: answer.eventId ?? "", status: response.status };
    },
    clients && local
      ? {
          drained: async () => (await queueDepth(clients.sqs, local.queues.events.url)) === 0,
          waitMs: WAIT_MS,
          pauseMs: 100,
        }
      : undefined,
  ).finally(() => clients?.destroy());
  if (o.json) {
    console.log(
      JSON.stringify({
        status,
        eventId,
        trigger,
        appId: event.appId,
        ...(projected === undefined ? {} : { inFlight: !projected }),
      }),
    );
    return;
  }
  console.log(
    `accepted ${trigger} of ${event.appId ?? "(no app)"}: event ${shortId(eventId)}  (npx webhook query event ${shortId(eventId)})`,
  );
  if (projected === false)
    console.log(
      `still in flight after ${WAIT_MS / 1000} s (the queue is busy): npx webhook events may not list it for a moment`,
    );
}

/** How long `trigger` waits for the local stack to project its event. */
const WAIT_MS = 10_000;

const program = new Command("trigger")
  .description("Post one event from its template to the running local stack, or to --url")
  .argument("<trigger>", "a trigger with a template in tools/simulate/templates", withTemplate)
  .option("--app <appId>", "the event's appId (default: the template's)")
  .option("--set <path=value>", "set a field, such as data.group.name=Climbers (repeatable)", assignment, [])
  .option(
    "--url <url>",
    "a webhook URL instead of the local stack (credentials: WEBHOOK_USERNAME, WEBHOOK_PASSWORD)",
  )
  .option(
    "--state-dir <dir>",
    "the local stack's state directory (env LOCAL_STATE_DIR)",
    process.env.LOCAL_STATE_DIR,
  )
  .option("--no-wait", "return once accepted, without waiting for the local stack to project it")
  .option("--json", "one JSON object on stdout")
  .action((trigger: string, o: TriggerOptions) => run(trigger, o));

process.exitCode = await runProgram(program, process.argv.slice(2));
