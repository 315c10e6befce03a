import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import {
  ArchiveLockedError,
  acquireArchiveLease,
  archiveLease,
  releaseArchiveLease,
} from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import type { RawArchiveLine } from "../../shared/contracts/bucket-layout";
import { type ForgetReport, forget } from "../../shared/erasure/forget";
import { mentionsUid } from "../../shared/erasure/redact";
import { projectBatch } from "../../shared/projector/core";
import { archiveBatch, quarantine } from "../../shared/projector/raw-archive";
import { projectionStores } from "../../shared/projector/stores";
import { parseStreamMessage } from "../../shared/stream/envelope";
import type { StreamMessage } from "../../shared/stream/publish-batches";
import { createActivityTable } from "../../tools/local/provision";
import { replayQuarantine } from "../../tools/ops/archive-repair";
import { scanArchive } from "../../tools/ops/archive-scan";
import { replayArchive } from "../../tools/ops/operations";
import { recentEvents } from "../../tools/ops/recent";
import { replayToStream } from "../../tools/ops/stream-replay";
import { judgeArchived } from "../../tools/ops/trace";
import { beforeCommand, createQueue, testClients, uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { appItems, delivery, erasureDeps, groupJoinedByU1, U1 } from "./forget-support";

/**
 * `replay` meets an erasure (the review of #40, item C), on DynamoDB Local, fauxqs and DuckDB. A
 * replay reads its range first and projects it after: an erasure that ran in between reported
 * done, and the replay then applied the user's lines it had read before the redaction (their
 * membership back, their uid in the tables). Every replay now holds the archive lease while it
 * runs: the erasure, tried at the replay's first read of an item, is refused, and runs after it.
 */
const env = projectorOnEmulators("replay-erasure");
const T0 = Date.UTC(2026, 2, 1, 12);
const NOW = Date.UTC(2026, 2, 10);
const GUID = "climbers";

/** An app's history archived and projected, its tables and activity table (the lease) made. */
async function world(more: readonly ReturnType<typeof delivery>[] = []) {
  const appId = uniqueName("replay");
  const tables = await env.tableSet();
  const activityTable = uniqueName("activity");
  await createActivityTable(env.dynamo, activityTable);
  const deliveries = [...groupJoinedByU1(appId, GUID, T0), ...more];
  const deps = env.depsFor(projectionStores(env.dynamo, tables));
  await archiveBatch(deliveries, deps.dataStore);
  await projectBatch(deliveries, deps);
  const site = { ...env, bucket: env.bucket, tables, activityTable, now: NOW };
  const lease = archiveLease({ doc: documentClient(env.dynamo), tableName: activityTable }, () => NOW);
  return { appId, tables, activityTable, site, lease, deps };
}

describe("a replay and an erasure", () => {
  it("an erasure tried while a replay re-applies the lines it read is refused, runs after it, and then no item names the user", async () => {
    // Prepare: the replay's projector on a client of its own, the erasure armed before its first
    // read of an item (after the replay read the archive, the user's lines unredacted).
    const { appId, tables, site, lease } = await world();
    expect(mentionsUid(JSON.stringify(await appItems(env.dynamo, tables, appId)), U1)).toBe(true);
    const { dynamo } = testClients();
    const projector = env.depsFor(projectionStores(dynamo, tables));
    const beforeFirstRead = beforeCommand(dynamo, /^(BatchGet|Get)(Item)?Command$/);
    let during: ForgetReport | unknown;
    beforeFirstRead(async () => {
      during = await forget(erasureDeps(site), { appId, uid: U1, requestedBy: "test" }).catch(
        (error: unknown) => error,
      );
    });

    // Act: the replay of the app's archive over its tables, the erasure inside it; then the
    // erasure again if it was refused.
    const replayed = await replayArchive(env.s3, projector.dataStore, projector, lease, { appId });
    const report =
      during instanceof ArchiveLockedError
        ? await forget(erasureDeps(site), { appId, uid: U1, requestedBy: "test" })
        : (during as ForgetReport);

    // Assess: no item names U1 (before: their membership was back, re-applied from the lines the
    // replay read before the redaction, under an erasure that said done); the erasure was refused
    // by the replay's run, and ran after it.
    const items = await appItems(env.dynamo, tables, appId);
    for (const item of Object.values(items).flat()) expect(mentionsUid(JSON.stringify(item), U1)).toBe(false);
    expect(report.counts.itemsDeleted + report.counts.itemsRedacted).toBeGreaterThan(0);
    expect(replayed.events).toBe(2);
    expect(during).toBeInstanceOf(ArchiveLockedError);
    expect((during as ArchiveLockedError).holder).toMatch(
      new RegExp(`^replay ${appId} …\\.\\.… [0-9a-f]{8}$`),
    );
  }, 120_000);

  it("replay --quarantine and --to-stream, while an erasure holds the lease: refused, nothing put back on the queue, nothing published", async () => {
    // Prepare: a quarantined record of the app, a stream publisher that keeps what it is given,
    // and an erasure holding the lease.
    const { appId, activityTable, lease } = await world();
    const queueUrl = await createQueue(env.sqs, uniqueName("events"));
    const [joined] = groupJoinedByU1(appId, GUID, T0);
    if (!joined) throw new Error("no delivery");
    const { dataStore } = env.depsFor(projectionStores(env.dynamo, await env.tableSet()));
    await quarantine(joined, "refused before", dataStore, () => T0);
    const published: StreamMessage[] = [];
    const publisher = {
      publish: async (messages: readonly StreamMessage[]) => {
        published.push(...messages);
        return { failed: new Map(), requests: 1, chunks: 1 };
      },
    };
    const table = { doc: documentClient(env.dynamo), tableName: activityTable };
    await acquireArchiveLease(table, "erasure e1", NOW);

    // Act
    const quarantined = await replayQuarantine(env, { bucket: env.bucket, queueUrl }, lease, { appId }).catch(
      (error: unknown) => error,
    );
    const streamed = await replayToStream(env.s3, dataStore, publisher, lease, { appId }).catch(
      (error: unknown) => error,
    );

    // Assess
    expect(quarantined).toEqual(new ArchiveLockedError("erasure e1"));
    expect(streamed).toEqual(new ArchiveLockedError("erasure e1"));
    expect(published).toEqual([]);
    const queued = await env.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(queued.Messages ?? []).toEqual([]);
    await releaseArchiveLease(table, "erasure e1");
  }, 120_000);
});

describe("the lines an erasure redacted (#42: the event story said pending, a replay re-projected them)", () => {
  /**
   * U1 joined a group (U3's) and came online; erased. The two lines that name them are redacted:
   * the erasure deleted their membership and presence, so the pure projections judged those lines
   * "not yet in every item" (pending), and a replay applied them again (projected 2: a membership
   * and a presence under the pseudonym, items the erasure had deleted).
   */
  async function erased() {
    const w = await world();
    const presence = delivery("user_connection_status_changed", w.appId, T0 + 5000);
    const { deps } = w;
    await archiveBatch([presence], deps.dataStore);
    await projectBatch([presence], deps);
    const report = await forget(erasureDeps(w.site), { appId: w.appId, uid: U1, requestedBy: "test" });
    const lines: RawArchiveLine[] = [];
    await scanArchive(env.s3, env.bucket, { appId: w.appId }, "oldest", (line) => {
      lines.push(line);
    });
    return { ...w, report, lines };
  }

  it("the story of a redacted line says redacted, with its erasure, not pending; every other line as before", async () => {
    // Prepare
    const { appId, deps, report, lines } = await erased();

    // Act
    const stories = await Promise.all(
      lines.map(async (line) => ({ line, story: await judgeArchived(line, deps.stores) })),
    );
    const recent = await recentEvents(env.s3, env.bucket, deps.stores, { appId, limit: 10 });

    // Assess
    const redacted = stories.filter(({ line }) => line.erasure);
    expect(redacted.map(({ line }) => line.trigger).sort()).toEqual([
      "group_member_joined",
      "user_connection_status_changed",
    ]);
    for (const { story } of redacted)
      expect(story).toMatchObject({ outcome: "redacted", erasure: report.erasureId });
    for (const { story } of stories.filter(({ line }) => !line.erasure))
      expect(story.outcome).toBe("projected");
    expect(recent.map((e) => e.outcome).sort()).toEqual(["projected", "redacted", "redacted"]);
  }, 120_000);

  it("a replay skips them and says how many: its dry run and its run agree, and the tables stay as the erasure left them", async () => {
    // Prepare
    const { appId, tables, deps, lease } = await erased();
    const before = await appItems(env.dynamo, tables, appId);

    // Act
    const predicted = await replayArchive(env.s3, deps.dataStore, deps, lease, { appId, dryRun: true });
    const replayed = await replayArchive(env.s3, deps.dataStore, deps, lease, { appId });

    // Assess
    expect({ ...predicted, dryRun: undefined }).toEqual({ ...replayed, dryRun: undefined });
    expect(replayed).toMatchObject({ events: 1, redacted: 2, outcomes: { projected: 0, stale: 1 } });
    expect(await appItems(env.dynamo, tables, appId)).toEqual(before);
    // Asked to include them (a rebuild), the dry run says truthfully what they would do: the erased
    // user's membership and presence back under the pseudonym.
    const rebuild = await replayArchive(env.s3, deps.dataStore, deps, lease, {
      appId,
      dryRun: true,
      includeRedacted: true,
    });
    expect(rebuild).toMatchObject({ events: 3, redacted: 0, outcomes: { projected: 2, stale: 1 } });
  }, 120_000);

  it("replay --to-stream publishes them as they now stand: the redacted body, marked with its erasure, never the uid (#41 item 5)", async () => {
    // Prepare: a publisher that keeps what it is given.
    const { appId, deps, lease, report } = await erased();
    const published: StreamMessage[] = [];
    const publisher = {
      publish: async (messages: readonly StreamMessage[]) => {
        published.push(...messages);
        return { failed: new Map(), requests: 1, chunks: 1 };
      },
    };

    // Act
    const streamed = await replayToStream(env.s3, deps.dataStore, publisher, lease, { appId });

    // Assess: every delivery of the app, none naming U1; the two the erasure redacted carry its id.
    expect(streamed.deliveries).toBe(3);
    const envelopes = published.map((m) => parseStreamMessage(m.body));
    for (const m of published) expect(mentionsUid(m.body, U1), m.body).toBe(false);
    expect(
      envelopes
        .flatMap((e) => (e.kind === "delivery" && e.erasure === report.erasureId ? [e.trigger] : []))
        .sort(),
    ).toEqual(["group_member_joined", "user_connection_status_changed"]);
  }, 120_000);
});
