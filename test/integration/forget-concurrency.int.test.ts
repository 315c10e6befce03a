import { GetObjectCommand } from "@aws-sdk/client-s3";
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { objectText } from "../../shared/contracts/bucket-layout";
import { type ForgetDependencies, type ForgetReport, forget } from "../../shared/erasure/forget";
import { type PlannedItem, zeroCounts } from "../../shared/erasure/plan";
import { mentionsUid, type Redaction } from "../../shared/erasure/redact";
import { eraseItems } from "../../shared/erasure/rewrite-items";
import { projectBatch } from "../../shared/projector/core";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { reconcilePresence } from "../../shared/reconcile/reconcile";
import { createActivityTable } from "../../tools/local/provision";
import { beforeCommand, createQueue, testClients, uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { appItems, delivery, entity, erasureDeps, groupJoinedByU1, U1, U2, U3, U4 } from "./forget-support";

/**
 * The erasure meets the projector (#40, item 1): every write of a projection item, the erasure's
 * included, is conditional on the `rev` it read and bumps it, so a projector that read an item
 * before the erasure rewrote it re-reads and re-applies its update over the redaction, never
 * puts its stale state back. DynamoDB Local, fauxqs, DuckDB; the projector's client carries a
 * middleware that runs the erasure between its read and its write.
 */
const env = projectorOnEmulators("forget-concurrency");
const T0 = Date.UTC(2026, 2, 1, 12);
const NOW = Date.UTC(2026, 2, 10);
const GUID = "hikers";

/**
 * A group owned by U3 in which U1 (the user erased) is a member, renamed it (`updatedBy`) and
 * added U2 (U2's membership `by`): then a scope change of U2 by U3, which does not name U1.
 */
function history(appId: string): { before: QueuedEvent[]; inFlight: QueuedEvent } {
  const group = (g: Record<string, unknown>) => ({
    ...g,
    guid: GUID,
    conversationId: `group_${GUID}`,
    owner: U3,
    name: "Hiking Group",
  });
  const before = [
    ...groupJoinedByU1(appId, GUID, T0, { name: "Hiking Group" }),
    delivery("group_updated", appId, T0 + 2000, (b) => {
      b.data.group = { ...group(b.data.group), updatedBy: U1, updatedAt: T0 / 1000 + 2 };
    }),
    delivery("group_member_added", appId, T0 + 3000, (b) => {
      b.data.group = group(b.data.group);
      b.data.members = { [U2]: { ...entity(U2, "George Alan"), conversationId: `${U3}_user_${U2}` } };
      b.data.by = entity(U1, "Andrew Joseph");
    }),
  ];
  const inFlight = delivery("group_member_scope_changed", appId, T0 + 4000, (b) => {
    b.data.group = { ...group(b.data.group), updatedAt: T0 / 1000 + 1 };
    b.data.members = { [U2]: { ...entity(U2, "George Alan"), scope: "admin", oldScope: "participant" } };
    b.data.by = entity(U3, "Carol Ray");
  });
  return { before, inFlight };
}

/** A projector whose DynamoDB client runs `between` once, just before its first write. */
function projectorWithHook(tables: Parameters<typeof projectionStores>[1]) {
  const { dynamo } = testClients();
  return {
    deps: env.depsFor(projectionStores(dynamo, tables)),
    beforeFirstWrite: beforeCommand(dynamo, /^Put(Item)?Command$/),
  };
}

describe("forget meets the projector", () => {
  it("a projector write that read an item before the erasure re-applies its update over the redaction (the issue's race, on DynamoDB Local)", async () => {
    // Prepare: the history archived and projected; the scope change archived, its projection
    // about to write what it read before the erasure.
    const appId = uniqueName("race");
    const tables = await env.tableSet();
    const activityTable = uniqueName("activity");
    await createActivityTable(env.dynamo, activityTable);
    const { before, inFlight } = history(appId);
    expect(mentionsUid(inFlight.body, U1)).toBe(false);
    const projector = projectorWithHook(tables);
    await archiveBatch(before, projector.deps.dataStore);
    await projectBatch(before, projector.deps);
    await archiveBatch([inFlight], projector.deps.dataStore);
    const site = { ...env, bucket: env.bucket, tables, activityTable, now: NOW };
    let report: ForgetReport | undefined;
    projector.beforeFirstWrite(async () => {
      report = await forget(erasureDeps(site), { appId, uid: U1, requestedBy: "test" });
    });

    // Act
    await projectBatch([inFlight], projector.deps);

    // Assess: the erasure ran in between; no item names U1 (bookkeeping included), and the
    // projector's update is there.
    expect(report?.counts.itemsRedacted).toBeGreaterThan(0);
    const items = await appItems(env.dynamo, tables, appId);
    for (const item of Object.values(items).flat()) expect(mentionsUid(JSON.stringify(item), U1)).toBe(false);
    const member = items.memberships?.find((m) => m.uid === U2);
    expect(member).toMatchObject({ scope: "admin", by: report?.pseudonym });
    expect(items.groups?.[0]).toMatchObject({ owner: U3, updatedBy: report?.pseudonym });
    expect(items.memberships?.some((m) => m.uid === U1)).toBe(false);
  }, 120_000);
  it("every interleaving of the projector's requests and the erasure's item writes gives the tables of the erasure then the projector (fast-check over the interleavings)", async () => {
    // Prepare: one table set; each run a new app with the history projected, then the erasure of
    // its items and the projection of two events that do not name U1, their requests interleaved.
    const tables = await env.tableSet();
    const activityTable = uniqueName("activity");
    await createActivityTable(env.dynamo, activityTable);
    const site = { ...env, bucket: env.bucket, tables, activityTable, now: NOW };
    const redaction: Redaction = {
      uid: U1,
      names: ["Andrew Joseph"],
      pseudonym: "erased-0123456789abcdef",
      erasureId: "e-interleaved",
    };
    const world = async (appId: string) => {
      const { before, inFlight } = history(appId);
      const joined = delivery("group_member_joined", appId, T0 + 5000, (b) => {
        b.data.group = {
          ...b.data.group,
          guid: GUID,
          owner: U3,
          conversationId: `group_${GUID}`,
          membersCount: 4,
        };
        b.data.members = { [U4]: entity(U4, "Dan Moe") };
      });
      await projectBatch(before, env.depsFor(projectionStores(env.dynamo, tables)));
      const pk = `${appId}#${GUID}`;
      const plan: Array<Pick<PlannedItem, "table" | "key">> = [
        { table: "groups", key: { pk } },
        { table: "memberships", key: { pk, uid: U1 } },
        { table: "memberships", key: { pk, uid: U2 } },
      ];
      return { inFlight: [inFlight, joined], events: [...before, inFlight, joined], plan };
    };
    // The tables of an app as text, its id and its events' ids (in `seen` and versions) named by
    // their place, so that two apps' tables compare.
    const state = async (appId: string, events: readonly QueuedEvent[]) => {
      let text = JSON.stringify(
        Object.values(await appItems(env.dynamo, tables, appId)).map((items) =>
          items.map(({ rev: _rev, ...item }) => item),
        ),
      ).replaceAll(appId, "APP");
      events.forEach((e, i) => {
        text = text
          .replaceAll(e.eventId.slice(0, 16), `event${i}`)
          .replaceAll(e.eventId.slice(0, 12), `event${i}`);
      });
      return canonicalJson(JSON.parse(text));
    };
    const referenceApp = uniqueName("reference");
    const reference = await world(referenceApp);
    await eraseItems(erasureDeps(site), reference.plan, redaction, zeroCounts());
    await projectBatch(reference.inFlight, env.depsFor(projectionStores(env.dynamo, tables)));
    const expected = await state(referenceApp, reference.events);
    expect(expected).not.toContain(U1);
    expect(expected).toContain('"scope":"admin"');
    expect(expected).toContain(U4);

    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 5 }), { maxLength: 40 }), async (choices) => {
        const appId = uniqueName("interleaved");
        const { inFlight, events, plan } = await world(appId);
        const steps = interleaving();
        const projectorClients = testClients();
        const erasureClients = testClients();
        steps.gate(projectorClients.dynamo, "projector");
        steps.gate(erasureClients.dynamo, "erasure");
        try {
          // Act
          const taken = await steps.run(
            [
              projectBatch(inFlight, env.depsFor(projectionStores(projectorClients.dynamo, tables))),
              eraseItems(
                { ...erasureDeps(site), doc: documentClient(erasureClients.dynamo) },
                plan,
                redaction,
                zeroCounts(),
              ),
            ],
            choices,
          );

          // Assess: the same tables as the erasure then the projector, whatever the order.
          expect(taken).toContain("projector");
          expect(taken).toContain("erasure");
          expect(await state(appId, events)).toBe(expected);
        } finally {
          projectorClients.dynamo.destroy();
          erasureClients.dynamo.destroy();
        }
      }),
      { numRuns: 25 },
    );
  }, 300_000);
});

describe("rewriteItem, the erasure's one way to change an item", () => {
  it("moves an item whose key holds the uid to the pseudonym's key in one transaction, reading again when a write came between its read and its move", async () => {
    // Prepare: a group whose guid holds U1 as an identifier (whole: a uid followed by `_` and more
    // is another uid, #50 defect 2); a writer that bumps it once, just before the erasure's move.
    const tables = await env.tableSet();
    const appId = uniqueName("moved");
    const guid = `${U1}.group`;
    const created = delivery("group_created", appId, T0, (b) => {
      b.data.group = { ...b.data.group, guid, owner: U3, conversationId: `group_${guid}` };
      b.data.members = { [U3]: entity(U3, "Carol Ray") };
    });
    await projectBatch([created], env.depsFor(projectionStores(env.dynamo, tables)));
    const { dynamo } = testClients();
    const raw = documentClient(env.dynamo);
    let interfered = false;
    beforeCommand(
      dynamo,
      /^TransactWrite/,
    )(async () => {
      interfered = true;
      await raw.send(
        new UpdateCommand({
          TableName: tables.groups,
          Key: { pk: `${appId}#${guid}` },
          UpdateExpression: "SET rev = rev + :one, membersCount = :n",
          ExpressionAttributeValues: { ":one": 1, ":n": 7 },
        }),
      );
    });
    const redaction: Redaction = {
      uid: U1,
      names: [],
      pseudonym: "erased-00000000000000aa",
      erasureId: "e-move",
    };
    const counts = zeroCounts();

    // Act
    await eraseItems(
      {
        ...erasureDeps({ ...env, bucket: env.bucket, tables, activityTable: "", now: NOW }),
        doc: documentClient(dynamo),
      },
      [{ table: "groups", key: { pk: `${appId}#${guid}` } }],
      redaction,
      counts,
    );

    // Assess: one group, under the pseudonym's key, with the write that came between.
    const groups = (await appItems(env.dynamo, tables, appId)).groups ?? [];
    expect(interfered).toBe(true);
    expect(groups.map((g) => [g.pk, g.guid, g.membersCount, g.rev])).toEqual([
      [`${appId}#${redaction.pseudonym}.group`, `${redaction.pseudonym}.group`, 7, 3],
    ]);
    expect(counts.itemsRedacted).toBe(1);
    dynamo.destroy();
  }, 60_000);
});

describe("what an erasure cannot close, said in its report and tested", () => {
  /**
   * A history with U1's presence, archived and projected, and a presence event of U1 waiting in
   * the events queue (it names the user): `process` receives it, archives and projects it, and
   * acknowledges it, as the projector would, at the moment a test chooses.
   */
  async function queuedWorld() {
    const appId = uniqueName("queued");
    const tables = await env.tableSet();
    const activityTable = uniqueName("activity");
    await createActivityTable(env.dynamo, activityTable);
    const queueUrl = await createQueue(env.sqs, uniqueName("events"));
    const presence = (at: number, status: string) =>
      delivery("user_connection_status_changed", appId, at, (b) => {
        Object.assign(b.data, { timestamp: at, status });
        b.data.user = { ...entity(U1, "Andrew Joseph"), status };
      });
    const before = [presence(T0 + 500, "online"), ...history(appId).before];
    const projector = env.depsFor(projectionStores(env.dynamo, tables));
    await archiveBatch(before, projector.dataStore);
    await projectBatch(before, projector);
    const inFlight = presence(T0 + 6000, "offline");
    await env.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(inFlight) }));
    const site = { ...env, bucket: env.bucket, tables, activityTable, now: NOW };
    const deps = (more: Partial<ForgetDependencies> = {}) =>
      erasureDeps(site, { queues: { sqs: env.sqs, urls: { "events queue": queueUrl } }, ...more });
    return {
      appId,
      tables,
      inFlight,
      projector,
      deps,
      async process(project = projector) {
        const out = await env.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1 }),
        );
        const [message] = out.Messages ?? [];
        await archiveBatch([inFlight], project.dataStore);
        await projectBatch([inFlight], project);
        await env.sqs.send(
          new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message?.ReceiptHandle }),
        );
      },
    };
  }

  /** Every line of the app's archive objects that holds U1. */
  async function archivedLinesOf(appId: string): Promise<string[]> {
    const lines: string[] = [];
    for (const { key } of await listObjects(env.s3, env.bucket, "raw/")) {
      const out = await env.s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: key }));
      const text = objectText((await out.Body?.transformToByteArray()) ?? new Uint8Array());
      lines.push(...text.split("\n").filter((l) => l.includes(`"appId":"${appId}"`) && mentionsUid(l, U1)));
    }
    return lines;
  }

  it("an event queued when the erasure began and projected during it: the report says how many were queued, though the queue is empty at its end; the object the projector archived after the search is rewritten too", async () => {
    // Prepare: the queued event is processed while the erasure rewrites the archive (after its search).
    const world = await queuedWorld();
    let processed = false;
    const deps = world.deps({
      checkpoint: async (step) => {
        if (processed || !step.startsWith("rewrite")) return;
        processed = true;
        await world.process();
      },
    });

    // Act
    const report = await forget(deps, { appId: world.appId, uid: U1, requestedBy: "test" });

    // Assess: nothing of U1 left, and the report does not hide that an event was queued.
    expect(processed).toBe(true);
    expect(await archivedLinesOf(world.appId)).toEqual([]);
    const items = await appItems(env.dynamo, world.tables, world.appId);
    expect(
      Object.values(items)
        .flat()
        .filter((i) => mentionsUid(JSON.stringify(i), U1)),
    ).toEqual([]);
    expect(report.unreached).toEqual([
      expect.stringMatching(/^events queue: 1 message\(s\) when the erasure began, 0 when it ended/),
    ]);
  }, 120_000);

  it("the deletion branch: an event naming the user, applied after their presence was deleted, recreates it; the erasure looks again before it reports, deletes it again and says so, and names the queue", async () => {
    // Prepare: the queued event is processed after the item step and the catch-up (at the recompute).
    const world = await queuedWorld();
    let processed = false;
    const deps = world.deps({
      checkpoint: async (step) => {
        if (processed || !step.startsWith("rollup")) return;
        processed = true;
        await world.process();
      },
    });

    // Act
    const report = await forget(deps, { appId: world.appId, uid: U1, requestedBy: "test" });

    // Assess: the presence it recreated is gone again; its archive line, written after the
    // catch-up, is what the report's queue line is about, and a second run erases it.
    expect(processed).toBe(true);
    const items = await appItems(env.dynamo, world.tables, world.appId);
    expect(items.presence).toEqual([]);
    expect(report.unreached).toEqual([
      expect.stringMatching(/^events queue: 1 message\(s\) when the erasure began, 0 when it ended/),
      "1 item(s) named the user again after their rewrite (an event applied meanwhile): erased again",
    ]);
    expect(await archivedLinesOf(world.appId)).toHaveLength(1);
    await forget(world.deps(), { appId: world.appId, uid: U1, requestedBy: "test" });
    expect(await archivedLinesOf(world.appId)).toEqual([]);
  }, 120_000);

  it("a batch archived, not acknowledged, erased, then retried: the retry puts its object's key again with the unredacted line (the projector's only rewrite), which the report covers only by naming the queue", async () => {
    // Prepare: the queued event's first attempt archived its batch and failed before its ack.
    const world = await queuedWorld();
    await archiveBatch([world.inFlight], world.projector.dataStore);
    const firstAttempt = await archivedLinesOf(world.appId);
    expect(firstAttempt.some((l) => l.includes(world.inFlight.eventId))).toBe(true);

    // Act: the erasure, then the batch's retry (same key: made from the batch).
    const report = await forget(world.deps(), { appId: world.appId, uid: U1, requestedBy: "test" });
    const erased = await archivedLinesOf(world.appId);
    await world.process();

    // Assess: the erasure rewrote the object, the retry put the line back, and the report had said
    // the event was queued when it began and when it ended; a second run erases it.
    expect(erased).toEqual([]);
    expect(report.unreached).toEqual([
      expect.stringMatching(/^events queue: 1 message\(s\) when the erasure began, 1 when it ended/),
    ]);
    const back = await archivedLinesOf(world.appId);
    expect(back).toHaveLength(1);
    expect(back[0]).toContain(world.inFlight.eventId);
    await forget(world.deps(), { appId: world.appId, uid: U1, requestedBy: "test" });
    expect(await archivedLinesOf(world.appId)).toEqual([]);
  }, 120_000);

  it("the reconciler, when the platform still lists the erased user, recreates their presence at its next run (said among what an erasure cannot prevent)", async () => {
    // Prepare: the user erased (their presence deleted); the platform still lists them.
    const world = await queuedWorld();
    await forget(world.deps(), { appId: world.appId, uid: U1, requestedBy: "test" });
    expect((await appItems(env.dynamo, world.tables, world.appId)).presence).toEqual([]);
    const listing = {
      users: [{ uid: U1, name: "Andrew Joseph", status: "offline" }],
      complete: true,
      pages: 1,
    };

    // Act
    await reconcilePresence({
      appId: world.appId,
      listing,
      fetchedAt: NOW + 60_000,
      onlineHere: [],
      presence: projectionStores(env.dynamo, world.tables).presence,
    });

    // Assess: their presence item is back, with their uid and name.
    const presence = (await appItems(env.dynamo, world.tables, world.appId)).presence ?? [];
    expect(presence.map((p) => [p.uid, p.name, p.status])).toEqual([[U1, "Andrew Joseph", "offline"]]);
  }, 120_000);

  it("an event in flight across the whole erasure (its item read before, written after): applied as an event that arrives after is, the report names the queue, and a second run once it is processed erases it", async () => {
    // Prepare: the projector reads U1's presence, the whole erasure runs, then it writes.
    const world = await queuedWorld();
    const projector = projectorWithHook(world.tables);
    let report: ForgetReport | undefined;
    projector.beforeFirstWrite(async () => {
      report = await forget(world.deps(), { appId: world.appId, uid: U1, requestedBy: "test" });
    });

    // Act
    await world.process(projector.deps);

    // Assess: the erasure deleted the presence; the projector's conditional write failed, it read
    // again and made the item from its event alone (the documented "processed normally").
    expect(report?.counts.itemsDeleted).toBeGreaterThan(0);
    expect(report?.unreached).toEqual([
      expect.stringMatching(/^events queue: 1 message\(s\) when the erasure began, 1 when it ended/),
    ]);
    const recreated = (await appItems(env.dynamo, world.tables, world.appId)).presence ?? [];
    expect(recreated.map((p) => [p.uid, p.status])).toEqual([[U1, "offline"]]);
    const again = await forget(world.deps(), { appId: world.appId, uid: U1, requestedBy: "test" });
    expect(again.unreached).toEqual([]);
    expect((await appItems(env.dynamo, world.tables, world.appId)).presence).toEqual([]);
    expect(await archivedLinesOf(world.appId)).toEqual([]);
  }, 120_000);
});

/**
 * Runs tasks whose DynamoDB requests each wait at a gate, and releases one request at a time, the
 * next one only once the last has answered and every task is either waiting at a gate again or
 * done: `choices` picks which of the waiting requests goes next. One interleaving of the tasks'
 * steps (a step: one request), the same every time for the same choices.
 */
function interleaving() {
  const waiting: Array<{ side: string; release: () => void }> = [];
  let answering = 0;
  const quiet = async () => {
    while (answering > 0) await new Promise((r) => setTimeout(r, 1));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return {
    /** Gates every request of a client: its requests are steps of `side`. */
    gate(
      client: { middlewareStack: ReturnType<typeof testClients>["dynamo"]["middlewareStack"] },
      side: string,
    ) {
      client.middlewareStack.add(
        (next) => async (args) => {
          await new Promise<void>((release) => waiting.push({ side, release }));
          try {
            return await next(args);
          } finally {
            answering--;
          }
        },
        { step: "initialize", name: `gate-${side}` },
      );
    },
    /** Runs the tasks to their end in the order `choices` picks; returns the sides of the steps taken. */
    async run(tasks: Array<Promise<unknown>>, choices: readonly number[]): Promise<string[]> {
      let done = false;
      const settled = Promise.allSettled(tasks).then(() => {
        done = true;
      });
      const steps: string[] = [];
      for (let i = 0; ; i++) {
        await quiet();
        if (waiting.length === 0) {
          if (done) break;
          await new Promise((r) => setTimeout(r, 1));
          continue;
        }
        const [next] = waiting.splice((choices[i] ?? 0) % waiting.length, 1);
        if (!next) continue;
        steps.push(next.side);
        answering++;
        next.release();
      }
      await settled;
      for (const task of tasks) await task;
      return steps;
    },
  };
}
