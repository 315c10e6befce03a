import { mkdtempSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DeleteMessageBatchCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import {
  deliveryId,
  factFields,
  parseStreamMessage,
  type StreamEnvelope,
  streamCopy,
} from "@webhook-backend/stream";
import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { projectionStores } from "../../shared/projector/stores";
import { streamMessage } from "../../shared/stream/envelope";
import { LISTENER_QUEUE_PREFIX } from "../../shared/stream/subscriptions";
import { emulatorClients } from "../../tools/local/clients";
import { freePort } from "../../tools/local/emulators";
import { readStats } from "../../tools/local/state";
import { resendEvent } from "../../tools/ops/inspect";
import { waitForDrain } from "../../tools/simulate/run";
import { spawnWebhook, webhookCli } from "../support/cli";
import type { Delivery } from "../support/histories";
import { simulatedHistory } from "../support/histories";
import { postWebhook } from "../support/ingest";
import {
  exited,
  killAll,
  killMidTraffic,
  memberEvent,
  type StartedProcess,
  startProcess,
} from "../support/local-process";
import { once } from "../support/once";
import { touchedKeys } from "../support/projection";

// One local stack for the file (`npm start` as a process: the SIGKILL test kills it and starts it
// again on the same state), with two subscribers declared as cdk.json would declare them.
const [A, B, C] = ["stream-a", "stream-b", "stream-c"];
const SUBSCRIBERS = [
  { name: "followed", apps: [A, B] },
  { name: "groups-of-a", apps: [A], triggers: ["group:*"], rawDelivery: false },
];
const dir = mkdtempSync(join(tmpdir(), "stream-"));
let port = 0;
let stack: StartedProcess;
const start = async () => {
  stack = await startProcess(dir, port, ["--console-port", "0"]);
};

beforeAll(async () => {
  port = await freePort();
  process.env.LOCAL_STREAM_SUBSCRIBERS = JSON.stringify(SUBSCRIBERS);
  await start();
}, 300_000);
afterAll(async () => {
  delete process.env.LOCAL_STREAM_SUBSCRIBERS;
  if (stack.child.exitCode === null) {
    stack.child.kill("SIGINT");
    await exited(stack.child);
  }
  killAll();
});

const clients = () => emulatorClients(stack.info.endpoints);
const subscriberUrl = (name: string) => stack.info.stream?.subscribers[name]?.url ?? "";

/** Receives (and deletes) everything a subscriber's queue holds now. */
async function takeAll(sqs: SQSClient, queueUrl: string): Promise<StreamEnvelope[]> {
  const all: StreamEnvelope[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return all;
    all.push(...messages.map((m) => parseStreamMessage(m.Body ?? "")));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}

/**
 * Puts deliveries on a queue as the ingest would have (their receipt and id; through S3 when the
 * emulator refuses the body's characters), in the order given.
 */
async function enqueue(queueUrl: string, deliveries: readonly Delivery[]): Promise<void> {
  const { sqs, s3, destroy } = clients();
  try {
    for (const d of deliveries) {
      const { trigger, appId } = JSON.parse(d.body) as { trigger: string; appId: string };
      await resendEvent(sqs, s3, stack.info.bucket, queueUrl, { ...d, trigger, appId });
    }
  } finally {
    destroy();
  }
}

const appOf = (d: Delivery) => (JSON.parse(d.body) as { appId: string }).appId;
const triggerOf = (d: Delivery) => (JSON.parse(d.body) as { trigger: string }).trigger;
const accepted = (d: Delivery) => refusalOf(parseEventBody(d.body)) === undefined;

// Three apps' simulated histories (seeds with facts at the same instant), recordings left out
// (the recorder would fetch them), each delivery's id as the edge gave it.
const histories = [
  [A, 83],
  [B, 320],
  [C, 0],
].map(([app, seed]) =>
  simulatedHistory(String(app), Number(seed), 40).deliveries.filter(
    (d) => triggerOf(d) !== "recording_generated",
  ),
);
/** A platform retry of every fifth delivery: the same bytes received 10 s later, enqueued before its original. */
const retries = histories
  .flat()
  .filter((_, i) => i % 5 === 0)
  .map((d) => ({ ...d, receivedAt: d.receivedAt + 10_000 }));
/** Every seventh delivery twice (an SQS redelivery of one delivery). */
const twice = histories.flat().filter((_, i) => i % 7 === 0);

/**
 * The subscribers' queues emptied of what a test before left there (the SIGKILL test's traffic is
 * still in flight when it ends), once the stack has drained.
 */
async function drainSubscribers() {
  await waitForDrain(stack.info, 120);
  const { sqs, destroy } = clients();
  try {
    for (const { name } of SUBSCRIBERS) await takeAll(sqs, subscriberUrl(name));
  } finally {
    destroy();
  }
}

/**
 * The histories, their retries and redeliveries enqueued and drained; then what each subscriber
 * received, the stack's counters, and the tables' items of the followed apps, read once, before any
 * other test changes them: done once, by the first test that needs them (any order, issue #56).
 */
const delivered = once(async () => {
  await drainSubscribers();
  const { sqs, dynamo, destroy } = clients();
  try {
    await enqueue(stack.info.queues.events.url, [...retries, ...histories.flat(), ...twice]);
    await waitForDrain(stack.info, 120);
    const received = await takeAll(sqs, subscriberUrl("followed"));
    const groupsOfA = await takeAll(sqs, subscriberUrl("groups-of-a"));
    const stats = readStats(dir);
    const stores = projectionStores(dynamo, stack.info.tables);
    const tables: Record<string, Record<string, unknown>> = {};
    for (const [table, keys] of touchedKeys(
      [...histories.flat(), ...retries].filter((d) => [A, B].includes(appOf(d))),
    ))
      for (const [id, key] of keys) {
        const item = await stores[table].get(key);
        if (item) tables[`${table}:${id}`] = factFields(table, item);
      }
    return { received, groupsOfA, stats, tables };
  } finally {
    destroy();
  }
});

describe("the stream of facts on the local stack", () => {
  it("delivers every accepted delivery of the followed apps at least once and nothing else, ids stable across redeliveries; folding what a subscriber received, in any order and with any duplicates, gives the tables' facts item for item", async () => {
    // Prepare and act: retries first, then the histories (reordered in transit) with duplicates.
    const { received, groupsOfA, stats, tables } = await delivered();

    // Assess: who received what.
    const all = [...histories.flat(), ...retries];
    const idOf = (d: Delivery) => deliveryId(d.eventId, d.receivedAt);
    const expected = new Set(all.filter((d) => [A, B].includes(appOf(d)) && accepted(d)).map(idOf));
    const ids = new Set(received.map((e) => e.id));
    const missing = all.filter((d) => expected.has(idOf(d)) && !ids.has(idOf(d)));
    expect(missing.map((d) => `${triggerOf(d)} ${d.receivedAt}`)).toEqual([]);
    expect([...ids].filter((id) => !expected.has(id))).toEqual([]);
    // An SQS redelivery is the same delivery: the same id, never a new one.
    expect(received.length).toBeGreaterThanOrEqual(expected.size);
    expect(
      new Set(groupsOfA.map((e) => e.kind === "delivery" && `${e.appId} ${e.trigger.split("_")[0]}`)),
    ).toEqual(new Set([`${A} group`]));
    expect(new Set(groupsOfA.map((e) => e.id))).toEqual(
      new Set(
        all.filter((d) => appOf(d) === A && triggerOf(d).startsWith("group_") && accepted(d)).map(idOf),
      ),
    );
    expect(stats.total.stream?.published ?? 0).toBeGreaterThanOrEqual(expected.size);
    expect(stats.total.stream?.unpublished).toBeUndefined();

    // Assess: the fold. The tables' items of the followed apps, read once (as delivered)…
    expect(Object.keys(tables).length).toBeGreaterThan(20);
    // …and the subscriber's copy, whatever the order, duplication and cuts it folds them in.
    await fc.assert(
      fc.asyncProperty(
        fc.subarray(received).chain((duplicates) =>
          fc.shuffledSubarray([...received, ...duplicates], {
            minLength: received.length + duplicates.length,
          }),
        ),
        fc.integer({ min: 1, max: 60 }),
        async (order, cut) => {
          const copy = streamCopy();
          for (let i = 0; i < order.length; i += cut) await copy.apply(order.slice(i, i + cut));
          const folded: Record<string, unknown> = {};
          for (const table of PROJECTION_TABLE_NAMES)
            for (const [id, facts] of copy.facts(table)) folded[`${table}:${id}`] = facts;
          expect(folded).toEqual(tables);
        },
      ),
      { numRuns: 25 },
    );
  }, 240_000);

  it("says what the tools publish: a replay into the tables nothing, a redrive of the events DLQ what it projects, replay --to-stream the archived deliveries with their ids, redrive --stream the unpublished facts", async () => {
    // Prepare
    const { received } = await delivered();
    await drainSubscribers();
    const { sqs, destroy } = clients();
    const late = simulatedHistory(A, 7, 5)
      .deliveries.filter((d) => triggerOf(d) === "group_created")
      .slice(0, 1);
    const days = histories.flat().map((d) => utcDay(d.receivedAt));
    const [from, to] = [days.sort()[0] ?? "", days.sort().at(-1) ?? ""];
    try {
      // Act and assess: a replay re-projects, and publishes nothing.
      const replayed = await webhookCli(["replay", "--app", A, "--state-dir", dir]);
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(await takeAll(sqs, subscriberUrl("followed"))).toEqual([]);

      // A redrive puts dead letters back on the events queue: the projector publishes them.
      await enqueue(stack.info.queues.events.deadLetterUrl, late);
      const redriven = await webhookCli(["redrive", "--queue", "events", "--state-dir", dir]);
      expect(redriven.code, redriven.stderr).toBe(0);
      await waitForDrain(stack.info, 120);
      const lateIds = late.map((d) => deliveryId(d.eventId, d.receivedAt));
      expect((await takeAll(sqs, subscriberUrl("followed"))).map((e) => e.id)).toEqual(lateIds);

      // replay --to-stream: every archived delivery of the app again, with the id it had.
      const toStream = await webhookCli([
        "replay",
        "--to-stream",
        "--app",
        A,
        "--from",
        from,
        "--to",
        to,
        "--state-dir",
        dir,
      ]);
      expect(toStream.code, toStream.stderr).toBe(0);
      const again = await takeAll(sqs, subscriberUrl("followed"));
      const firstTime = received.filter((e) => e.appId === A).map((e) => e.id);
      const lateInWindow = late.filter((d) => utcDay(d.receivedAt) >= from && utcDay(d.receivedAt) <= to);
      expect(new Set(again.map((e) => e.id))).toEqual(
        new Set([...firstTime, ...lateInWindow.map((d) => deliveryId(d.eventId, d.receivedAt))]),
      );
      expect(again.every((e) => e.kind === "delivery" && e.outcome === undefined)).toBe(true);

      // redrive --stream: a fact the projector kept unpublished goes out with its id.
      const kept = again[0];
      if (!kept) throw new Error("nothing replayed");
      const message = streamMessage(kept);
      await sqsMessageQueue(sqs, stack.info.stream?.unpublished.url ?? "").send(message);
      const unpublished = await webhookCli(["redrive", "--stream", "--state-dir", dir]);
      expect(unpublished.code, unpublished.stderr).toBe(0);
      expect(unpublished.stdout).toContain("stream: published 1 unpublished fact(s)");
      expect((await takeAll(sqs, subscriberUrl("followed"))).map((e) => e.id)).toEqual([kept.id]);
    } finally {
      destroy();
    }
  }, 300_000);

  it("loses no acknowledged delivery when the stack is killed (SIGKILL) mid-stream: after a restart each reaches the subscriber", async () => {
    // Act: kill -9 the stack's process group mid-traffic, then start it again on the same state.
    const acked = await killMidTraffic(stack, A);
    await start();
    await waitForDrain(stack.info, 120);

    // Assess
    const { sqs, destroy } = clients();
    try {
      const got = new Set(
        (await takeAll(sqs, subscriberUrl("followed"))).flatMap((e) =>
          e.kind === "delivery" ? [e.eventId] : [],
        ),
      );
      expect(acked.size).toBeGreaterThan(10);
      expect([...acked].filter((id) => !got.has(id))).toEqual([]);
    } finally {
      destroy();
    }
  }, 300_000);

  it("tells every subscriber of the app of an erasure, whatever its triggers", async () => {
    // Prepare: a user of A of this test's own (erasing one of the histories' would change what
    // the other tests compare), named nowhere else.
    const joined = JSON.parse(memberEvent(A, 7_000_001));
    const [user = ""] = Object.keys(joined.data.members);
    joined.data.members[user].name = "Erasure Notice Test";
    expect((await postWebhook(stack.info, JSON.stringify(joined))).status).toBe(200);
    await drainSubscribers();

    // Act
    const run = await webhookCli(["forget", user, "--app", A, "--state-dir", dir]);
    expect(run.code, run.stderr).toBe(0);
    const { sqs, destroy } = clients();
    try {
      for (const name of ["followed", "groups-of-a"]) {
        const notices = (await takeAll(sqs, subscriberUrl(name))).filter((e) => e.kind === "erasure");
        expect(notices.map((n) => [n.appId, n.kind === "erasure" && n.scope])).toEqual([[A, "user"]]);
      }
    } finally {
      destroy();
    }
  }, 300_000);

  it("listen --forward-to POSTs each delivery to a local endpoint, retrying a 5xx, and Ctrl-C removes its queue", async () => {
    // Prepare: an endpoint that fails its first request.
    const posts: Array<{ id?: string; body: string }> = [];
    let requests = 0;
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        requests++;
        if (requests === 1) return void res.writeHead(503).end();
        posts.push({ id: String(req.headers["webhook-stream-id"]), body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const listen = spawnWebhook(["listen", "--app", A, "--forward-to", url, "--state-dir", dir]);
    try {
      for (let i = 0; i < 150 && !listen.written.stderr.includes("Ctrl-C"); i++)
        await new Promise((r) => setTimeout(r, 100));

      // Act
      const event = memberEvent(A, 10_001);
      const { eventId } = await postWebhook(stack.info, event);
      for (let i = 0; i < 150 && posts.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      listen.child.kill("SIGINT");
      const code = await listen.exit;

      // Assess
      expect(posts.map((p) => JSON.parse(p.body).eventId)).toEqual([eventId]);
      expect(posts[0]?.id).toMatch(new RegExp(`^${eventId}@\\d+$`));
      expect(requests).toBe(2);
      expect(code, listen.written.stderr).toBe(0);
      expect(listen.written.stderr).toContain(`→ POST ${url} [200]`);
      const queue = /removes the queue (\S+)\./.exec(listen.written.stderr)?.[1] ?? "";
      expect(queue.startsWith(LISTENER_QUEUE_PREFIX)).toBe(true);
      const { sqs, destroy } = clients();
      const left = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: queue }));
      destroy();
      expect(left.QueueUrls ?? []).toEqual([]);
    } finally {
      if (listen.child.exitCode === null) listen.child.kill("SIGKILL");
      server.close();
    }
  }, 300_000);
});
