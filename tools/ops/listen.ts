/**
 * `webhook listen` (#41): a temporary queue subscribed to the stream with a filter, the listener
 * switch kept on while it runs, each delivery printed and, with a target, POSTed to a local
 * endpoint with retries (as `stripe listen --forward-to`). The command (tools/commands/listen.ts)
 * is the thin part; this is what it and its tests share.
 */
import { randomUUID } from "node:crypto";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SNSClient } from "@aws-sdk/client-sns";
import {
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { parseStreamMessage, publishedMessage, type StreamEnvelope } from "../../shared/stream/envelope";
import { LISTENER_LEASE_MS, LISTENER_RENEW_MS, turnListenersOn } from "../../shared/stream/listener-switch";
import {
  LISTENER_EXPIRES_TAG,
  LISTENER_QUEUE_PREFIX,
  LISTENER_QUEUE_TTL_MS,
  removeExpiredListeners,
  removeSubscribedQueue,
  renewListenerQueue,
  type SubscribedQueue,
  subscribeQueue,
} from "../../shared/stream/subscriptions";
import { shortId } from "../cli/event-id";
import { count, isoTime } from "../cli/format";

export interface ListenerClients {
  sns: SNSClient;
  sqs: SQSClient;
  dynamo: DynamoDBClient;
}

export interface ListenerPlace {
  topicArn: string;
  /** The apps table, where the listener switch is. */
  appsTable: string;
}

/** An open listener: its queue, and what renews and removes it. */
export interface Listener extends SubscribedQueue {
  /** Keeps the switch on and the queue from expiring (every `LISTENER_RENEW_MS`). */
  renew(now?: number): Promise<void>;
  /** Unsubscribes and deletes the queue. */
  close(): Promise<void>;
  /** How many crashed listeners' queues and subscriptions it removed when it opened. */
  cleaned: number;
}

/**
 * Opens a listener: removes what crashed listeners left (`removeExpiredListeners`), subscribes a
 * new `webhook-listen-<id>` queue to the topic with the filter (raw delivery: the queue holds the
 * envelopes), tagged with its expiry, and turns the listener switch on.
 *
 * @example const listener = await openListener(clients, { topicArn, appsTable }, filterPolicyOf({ apps: ["app1"] }))
 */
export async function openListener(
  { sns, sqs, dynamo }: ListenerClients,
  place: ListenerPlace,
  filterPolicy: Record<string, unknown> | undefined,
  now = Date.now(),
): Promise<Listener> {
  const cleaned = await removeExpiredListeners(sns, sqs, place.topicArn, now);
  const queue = await subscribeQueue(sns, sqs, {
    topicArn: place.topicArn,
    queueName: `${LISTENER_QUEUE_PREFIX}${randomUUID().slice(0, 8)}`,
    filterPolicy,
    rawDelivery: true,
    // An hour is plenty for a listener's backlog; a crashed one's queue goes within minutes anyway.
    attributes: { MessageRetentionPeriod: "3600", VisibilityTimeout: "60" },
    tags: { [LISTENER_EXPIRES_TAG]: String(now + LISTENER_QUEUE_TTL_MS) },
  });
  const renew = async (at = Date.now()) => {
    await Promise.all([
      turnListenersOn(dynamo, place.appsTable, at + LISTENER_LEASE_MS),
      renewListenerQueue(sqs, queue.queueUrl, at),
    ]);
  };
  try {
    await turnListenersOn(dynamo, place.appsTable, now + LISTENER_LEASE_MS);
  } catch (error) {
    await removeSubscribedQueue(sns, sqs, queue);
    throw error;
  }
  return { ...queue, cleaned, renew, close: () => removeSubscribedQueue(sns, sqs, queue) };
}

/**
 * One readable line per message: when it was received, what it is, its app and trigger, its id.
 *
 * @example describeMessage(envelope) // "2026-11-23T10:00:01Z  delivery  group_created  app=app1  id=5f0c…@1763…  projected"
 */
export function describeMessage(envelope: StreamEnvelope): string {
  if (envelope.kind === "erasure")
    return [
      isoTime(envelope.finishedAt),
      "erasure ",
      `scope=${envelope.scope}`,
      `app=${envelope.appId}`,
      `erasure=${envelope.id}`,
      ...(envelope.pseudonym ? [`pseudonym=${envelope.pseudonym}`] : []),
    ].join("  ");
  return [
    isoTime(envelope.receivedAt),
    "delivery",
    envelope.trigger,
    `app=${envelope.appId ?? "(none)"}`,
    `id=${shortId(envelope.eventId)}@${envelope.receivedAt}`,
    ...(envelope.outcome ? [envelope.outcome] : []),
    ...(envelope.bodyObject ? [`body in s3://${envelope.bodyObject.bucket}/${envelope.bodyObject.key}`] : []),
    ...(envelope.erasure ? [`redacted by ${envelope.erasure}`] : []),
  ].join("  ");
}

export interface ForwardResult {
  /** The last answer's status, or 0 when nothing answered. */
  status: number;
  attempts: number;
  ok: boolean;
  /** Stopped by its signal (Ctrl-C) before the endpoint took it: neither delivered nor dropped. */
  stopped?: boolean;
}

/**
 * POSTs one message (its JSON as received) to a local endpoint, with its id and kind in headers,
 * retrying a refused connection, a 5xx or a 429 with a doubling wait; a 2xx is delivered, any
 * other answer is final. `signal` (Ctrl-C) stops it at once, the POST in flight too (`stopped`).
 *
 * @example await forwardMessage("http://localhost:4000/hooks", text, envelope) // { status: 200, attempts: 1, ok: true }
 */
export async function forwardMessage(
  url: string,
  text: string,
  envelope: StreamEnvelope,
  {
    attempts = 5,
    backoffMs = 250,
    signal,
    sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
      }),
  }: {
    attempts?: number;
    backoffMs?: number;
    signal?: AbortSignal;
    sleep?: (ms: number) => Promise<void>;
  } = {},
): Promise<ForwardResult> {
  let status = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-stream-id": envelope.id,
          "webhook-stream-kind": envelope.kind,
        },
        body: text,
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(10_000)]) : AbortSignal.timeout(10_000),
      });
      status = response.status;
      await response.body?.cancel();
      if (response.ok) return { status, attempts: attempt, ok: true };
      if (status < 500 && status !== 429) return { status, attempts: attempt, ok: false };
    } catch {
      status = 0;
    }
    if (signal?.aborted) return { status, attempts: attempt, ok: false, stopped: true };
    if (attempt >= attempts) return { status, attempts: attempt, ok: false };
    await sleep(backoffMs * 2 ** (attempt - 1));
    if (signal?.aborted) return { status, attempts: attempt, ok: false, stopped: true };
  }
}

/**
 * What `listen --forward-to` prints of one message's POST: its status, and the attempts when the
 * endpoint took it only after a retry (its 5xx, 429 or silence is otherwise invisible). A message
 * the endpoint never took is named, with what sends it again: a delivery, the replay of that one
 * delivery to this listener's queue alone (`replay --to-subscriber <queue> --delivery <id>`, no
 * other subscriber receives it); an erasure notice, which no replay sends, the erasure's id.
 *
 * @example forwardedLine("http://localhost:4000/hooks", { status: 200, attempts: 2, ok: true }, envelope, { queueName }) // "  → POST http://localhost:4000/hooks [200] at attempt 2 (retried)"
 */
export function forwardedLine(
  url: string,
  result: ForwardResult,
  envelope: StreamEnvelope,
  listener: { queueName: string; stack?: string },
): string {
  if (result.ok)
    return `  → POST ${url} [${result.status}]${result.attempts > 1 ? ` at attempt ${result.attempts} (retried)` : ""}`;
  const failed = `  → POST ${url} failed after ${count(result.attempts, "attempt")} [${result.status || "no answer"}]: dropped`;
  if (envelope.kind === "erasure")
    return `${failed} the erasure notice ${envelope.id} (app ${envelope.appId})\n    no replay sends a notice again: stdout shows it`;
  const id = `${shortId(envelope.eventId)}@${envelope.receivedAt}`;
  const replay = [
    `npx webhook replay --to-subscriber ${listener.queueName} --delivery ${id}`,
    ...(listener.stack ? [`--stack ${listener.stack}`] : []),
  ].join(" ");
  return `${failed} ${id}\n    to send it to this listener again: ${replay}`;
}

export interface ListenOptions {
  /** Print each message as its JSON (one line) on stdout, rather than a readable line. */
  json?: boolean;
  /** POST each message here. */
  forwardTo?: string;
  /** The deployed stack listened to, for the command a dropped message's line gives. */
  stack?: string;
  /** Seconds a receive waits for messages (long polling). @default 5 */
  waitSeconds?: number;
  out: (line: string) => void;
  err: (line: string) => void;
  signal: AbortSignal;
}

/**
 * Receives the listener's messages until `signal` aborts, and for each prints it (`--json`: the
 * message as published, one JSON line, unknown fields kept; else `describeMessage`), forwards it
 * when asked, then deletes it (a message the endpoint never took is reported and dropped, with
 * the replay that sends it to this listener again). The listener is renewed every
 * `LISTENER_RENEW_MS` on a timer of its own, whatever the receive or a forward is doing (a slow
 * endpoint, a breakpoint in the developer's handler): the switch's lease is three minutes, and
 * past ten minutes without a renewal the next `listen` removes the queue as a crashed one's.
 * `signal` stops a forward in flight too: the message is left undeleted (its queue goes with the
 * listener). Returns how many messages it handled.
 *
 * @example await receiveUntilAborted(sqs, listener, { json: true, out: console.log, err: console.error, signal })
 */
export async function receiveUntilAborted(
  sqs: SQSClient,
  listener: Pick<Listener, "queueUrl" | "renew">,
  options: ListenOptions,
): Promise<number> {
  const renewal = setInterval(() => {
    void listener
      .renew(Date.now())
      .catch((error: unknown) => options.err(`renewing the listener failed: ${String(error)}`));
  }, LISTENER_RENEW_MS);
  try {
    return await receiveMessages(sqs, listener.queueUrl, options);
  } finally {
    clearInterval(renewal);
  }
}

/** `receiveUntilAborted`'s loop: receive, print, forward, delete. */
async function receiveMessages(sqs: SQSClient, queueUrl: string, options: ListenOptions): Promise<number> {
  const queueName = queueUrl.split("/").pop() ?? queueUrl;
  const remove = (message: Message) =>
    sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
  let handled = 0;
  while (!options.signal.aborted) {
    let messages: Message[];
    try {
      messages =
        (
          await sqs.send(
            new ReceiveMessageCommand({
              QueueUrl: queueUrl,
              MaxNumberOfMessages: 10,
              WaitTimeSeconds: options.waitSeconds ?? 5,
            }),
            { abortSignal: options.signal },
          )
        ).Messages ?? [];
    } catch (error) {
      if (options.signal.aborted) break;
      throw error;
    }
    for (const message of messages) {
      if (options.signal.aborted) break;
      const text = message.Body ?? "";
      let envelope: StreamEnvelope;
      try {
        envelope = parseStreamMessage(text);
      } catch (error) {
        options.err(`not a stream message, skipped: ${(error as Error).message}`);
        await remove(message);
        continue;
      }
      // --json: the message as published, one line, fields this version does not know kept (the contract: additive).
      options.out(options.json ? JSON.stringify(publishedMessage(text)) : describeMessage(envelope));
      if (options.forwardTo) {
        const result = await forwardMessage(options.forwardTo, text, envelope, { signal: options.signal });
        if (result.stopped) break;
        options.err(forwardedLine(options.forwardTo, result, envelope, { queueName, stack: options.stack }));
      }
      await remove(message);
      handled++;
    }
  }
  return handled;
}

/**
 * Ctrl-C (and SIGTERM, SIGHUP) for a command that must clean up before it ends: the first signal
 * aborts the returned signal (and says so with `stopping`), every later one only says it is still
 * cleaning up (`still`), so a second Ctrl-C does not kill it before its queue is removed.
 * `dispose` takes the handlers off.
 *
 * @example const { signal, dispose } = stopOnSignals(process, "Stopping…", "still removing the queue", err)
 */
export function stopOnSignals(
  emitter: Pick<NodeJS.Process, "on" | "off">,
  stopping: string,
  still: string,
  err: (line: string) => void,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handler = () => {
    if (controller.signal.aborted) err(still);
    else {
      err(stopping);
      controller.abort();
    }
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const signal of signals) emitter.on(signal, handler);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const signal of signals) emitter.off(signal, handler);
    },
  };
}
