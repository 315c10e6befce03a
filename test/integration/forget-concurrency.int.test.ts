import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { type ErasurePlan, type ForgetReport, forget } from "../../shared/erasure/forget";
import { zeroCounts } from "../../shared/erasure/plan";
import { mentionsUid, type Redaction } from "../../shared/erasure/redact";
import { eraseItems } from "../../shared/erasure/rewrite-items";
import { canonicalJson } from "../../shared/projections/canonical-json";
import { projectBatch } from "../../shared/projector/core";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { createActivityTable } from "../../tools/local/provision";
import { testClients, uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { appItems, delivery, entity, erasureDeps, U1, U2, U3, U4 } from "./forget-support";

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
    delivery("group_created", appId, T0, (b) => {
      b.data.group = group(b.data.group);
      b.data.members = { [U3]: entity(U3, "Carol Ray") };
    }),
    delivery("group_member_joined", appId, T0 + 1000, (b) => {
      b.data.group = group(b.data.group);
      b.data.members = { [U1]: entity(U1, "Andrew Joseph") };
    }),
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
  let between: (() => Promise<void>) | undefined;
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      if (/^Put(Item)?Command$/.test(context.commandName ?? "") && between) {
        const run = between;
        between = undefined;
        await run();
      }
      return next(args);
    },
    { step: "initialize", name: "betweenReadAndWrite" },
  );
  return {
    deps: env.depsFor(projectionStores(dynamo, tables)),
    beforeFirstWrite(run: () => Promise<void>) {
      between = run;
    },
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
      const plan: Pick<ErasurePlan, "items"> = {
        items: [
          { table: "groups", key: { pk } },
          { table: "memberships", key: { pk, uid: U1 } },
          { table: "memberships", key: { pk, uid: U2 } },
        ],
      };
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
