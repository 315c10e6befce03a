import { createHash, randomUUID } from "node:crypto";
import { GetObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import type { RawArchiveLine } from "../../shared/contracts/bucket-layout";
import { projectSqsBatch } from "../../shared/projector/batch";
import type { ProjectorDependencies } from "../../shared/projector/core";
import type { ProjectionStores } from "../../shared/projector/registry";
import { projectionStores } from "../../shared/projector/stores";
import { ingestRecordFor as ingestRecord, sqsEvent, sqsRecord } from "../../tools/local/sqs-event";
import { scanArchive } from "../../tools/ops/archive-scan";
import { analyticsQueries } from "../../tools/query/queries";
import { checkTables } from "../../tools/simulate/check";
import { testClients } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { fixture } from "../support/fixtures";
import {
  type Delivery,
  FIXED_HISTORIES,
  fixedExample,
  type History,
  historyArbitrary,
} from "../support/histories";
import { projectAll, projectInBatches, readTables } from "../support/projection";

const emulators = projectorOnEmulators("projector-test");
const { dynamo, s3, silent, tableSet, depsFor } = emulators;

/** Several workers at once, each taking the next delivery: the order between them is the scheduler's. */
async function projectConcurrently(
  deliveries: readonly Delivery[],
  deps: ProjectorDependencies,
  workers: number,
) {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < deliveries.length) {
        const d = deliveries[next++] as Delivery;
        await projectAll([d], deps);
      }
    }),
  );
}

/**
 * The property tests' bound: a fixed amount of work (their runs, each projecting a history and
 * reading it back; the second creates four tables per run), which takes 40-55 s on an idle
 * 2-core machine and more while other suites load it. Not a timing assertion: the limit of a hang.
 */
const PROPERTY_TIMEOUT_MS = 240_000;

describe("projections on DynamoDB Local", () => {
  it(
    "give the same tables in event-time order, in any order with duplicates, and in batches of any sizes by concurrent workers",
    async () => {
      const [ordered, shuffled, batched] = await Promise.all([tableSet(), tableSet(), tableSet()]);
      const stores = [ordered, shuffled, batched].map((names) => projectionStores(dynamo, names));
      const [a, b, c] = stores as [ProjectionStores, ProjectionStores, ProjectionStores];
      await fc.assert(
        fc.asyncProperty(
          historyArbitrary(
            fc.constant(0).map(() => `app-${randomUUID().slice(0, 8)}`),
            30,
          ),
          fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }),
          fc.integer({ min: 1, max: 4 }),
          async ({ history, shuffled: chaos }, sizes, workers) => {
            await projectAll(history.deliveries, depsFor(a));
            await projectConcurrently(chaos, depsFor(b), 4);
            await projectInBatches(chaos, sizes, depsFor(c), workers);
            const expected = await readTables(a, history.deliveries);
            expect(await readTables(b, history.deliveries)).toBe(expected);
            expect(await readTables(c, history.deliveries)).toBe(expected);
          },
        ),
        {
          numRuns: 25,
          examples: FIXED_HISTORIES.slice(0, 4).map((fixed) => [
            fixedExample(`app-${randomUUID().slice(0, 8)}`, fixed),
            [5, 11],
            2,
          ]),
        },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "answer the access patterns with what the history implies",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          historyArbitrary(
            fc.constant(0).map(() => `app-${randomUUID().slice(0, 8)}`),
            25,
          ),
          async ({ history, shuffled }) => {
            // Fresh tables for every run: a shrunk case replays the same app id.
            const names = await tableSet();
            await projectAll(shuffled, depsFor(projectionStores(dynamo, names)));
            await assertAccessPatterns(analyticsQueries(documentClient(dynamo), names), history);
          },
        ),
        {
          numRuns: Number(process.env.PROPERTY_RUNS ?? 10),
          examples: FIXED_HISTORIES.map((fixed) => [fixedExample(`app-${randomUUID().slice(0, 8)}`, fixed)]),
        },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

async function assertAccessPatterns(queries: ReturnType<typeof analyticsQueries>, history: History) {
  const { appId, generated } = history;
  // The simulator's own check: groups, members (and the groups of each member), who is online,
  // sessions with their participants; no recorder runs here.
  expect(await checkTables(generated, queries, { recordings: false })).toEqual([]);
  const expected = generated.expected.get(appId);
  for (const p of await queries.online(appId))
    expect((await queries.presence(appId, p.uid))?.status).toBe("online");
  const sessions = await queries.sessionsBetween(appId, 0, Number.MAX_SAFE_INTEGER);
  expect(new Set(sessions.map((s) => s.sessionId))).toEqual(new Set(expected?.sessions.keys()));
  for (const s of sessions)
    expect((await queries.session(appId, s.sessionId))?.sessionTime).toBe(s.sessionTime);
  // Another app sees nothing of this one.
  for (const guid of expected?.groups.keys() ?? [])
    expect(await queries.members(`${appId}-other`, guid)).toEqual([]);
}

describe("access patterns on the fixtures", () => {
  it("sessions of a user, in a time range, and the recordings", async () => {
    const names = await tableSet();
    const deps = depsFor(projectionStores(dynamo, names));
    const queries = analyticsQueries(documentClient(dynamo), names);
    const sessionId = fixture("call_started").data.sessionId as string;
    const bodies = ["call_initiated", "call_started", "call_ended", "recording_generated"].map((n) =>
      JSON.stringify(fixture(n)),
    );
    await projectAll(
      bodies.map((body, i) => ({ body, receivedAt: 1_696_940_000_000 + i, eventId: `e${i}` })),
      deps,
    );
    const app = "2598234fa1e3b9c";
    expect((await queries.sessionsOf(app, "cometchat-uid-1")).map((s) => s.sessionId)).toEqual([sessionId]);
    expect((await queries.sessionsOf(app, "cometchat-uid-5")).map((s) => s.sessionId)).toEqual([sessionId]);
    expect(await queries.sessionsOf(app, "cometchat-uid-9")).toEqual([]);
    const inRange = await queries.sessionsBetween(app, 1_696_934_000_000, 1_696_935_000_000);
    expect(inRange.map((s) => s.sessionId)).toEqual([sessionId]);
    expect(await queries.sessionsBetween(app, 1_696_935_000_000, 1_696_936_000_000)).toEqual([]);
    const recordings = await queries.recordings(app);
    expect(recordings[0]?.recordings["1696937627"]?.status).toBe("pending");
  });
});

describe("the projector handler over the emulators", () => {
  it("projects the valid records, quarantines the invalid one, and reports exactly the failed one", async () => {
    // Prepare
    const names = await tableSet();
    const failingGuid = "guid-that-throttles";
    const dynamoClient = testClients().dynamo;
    // Fault injection at the client level: DynamoDB Local cannot be made to throttle, so a
    // middleware fails every write of one item as AWS would under throttling.
    dynamoClient.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Item?: { pk?: unknown } };
        if (typeof input.Item?.pk === "object" && JSON.stringify(input.Item.pk).includes(failingGuid)) {
          throw Object.assign(new Error("Rate of requests exceeds the allowed throughput."), {
            name: "ProvisionedThroughputExceededException",
            $fault: "client",
          });
        }
        return next(args);
      },
      { step: "build", name: "injectThrottling" },
    );
    const deps = depsFor(projectionStores(dynamoClient, names));
    const app = `app-${randomUUID().slice(0, 8)}`;
    const created = fixture("group_created");
    created.appId = app;
    const throttled = fixture("group_created");
    throttled.appId = app;
    throttled.data.group.guid = failingGuid;
    const invalid = fixture("group_member_scope_changed");
    invalid.appId = app;
    delete invalid.data.members["cometchat-uid-2"].scope;
    const unknown = { trigger: "after_feed_item_read", appId: app, data: {} };
    const big = fixture("message_sent");
    big.appId = app;
    const bigBody = JSON.stringify(big);
    const pointerKey = `oversize/${app}/big.json`;
    const bigId = createHash("sha256").update(bigBody).digest("hex");
    await s3BlobStore(s3, emulators.bucket).put(pointerKey, bigBody);
    const records = [
      ingestRecord(JSON.stringify(created)),
      ingestRecord(JSON.stringify(throttled)),
      ingestRecord(JSON.stringify(invalid)),
      ingestRecord(JSON.stringify(unknown)),
      sqsRecord(
        JSON.stringify({ bucket: emulators.bucket, key: pointerKey, size: bigBody.length, eventId: bigId }),
        {
          trigger: "message_sent",
          appId: app,
          receivedAt: Date.now(),
          eventId: bigId,
          bodyLocation: "s3",
        },
      ),
    ];

    // Act
    const response = await projectSqsBatch(sqsEvent(records), undefined, deps, silent());

    // Assess
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1]?.messageId }]);
    const queries = analyticsQueries(documentClient(dynamo), names);
    expect((await queries.group(app, "cometchat-guid-1"))?.name).toBe("Hiking Group");
    expect(await queries.group(app, failingGuid)).toBeUndefined();
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: emulators.bucket, Prefix: `quarantine/app=${app}/` }),
    );
    expect(listed.Contents).toHaveLength(1);
    const quarantined = await s3.send(
      new GetObjectCommand({ Bucket: emulators.bucket, Key: listed.Contents?.[0]?.Key }),
    );
    const record = JSON.parse((await quarantined.Body?.transformToString()) ?? "{}");
    expect(record.error).toContain("group_member_scope_changed: data.members.cometchat-uid-2.scope");
    expect(record.body).toBe(JSON.stringify(invalid));
    // The archive holds every app's lines together (one object per batch): this app's.
    const lines: RawArchiveLine[] = [];
    await scanArchive(s3, emulators.bucket, { appId: app }, "oldest", (line) => {
      lines.push(line);
    });
    expect(lines.map((l) => l.body).sort()).toEqual(
      [
        JSON.stringify(created),
        JSON.stringify(throttled),
        JSON.stringify(invalid),
        JSON.stringify(unknown),
        bigBody,
      ].sort(),
    );
  });

  it("quarantines a message that breaks its contract (a pointer without a key) instead of retrying it", async () => {
    // Prepare
    const names = await tableSet();
    const deps = depsFor(projectionStores(dynamo, names));
    const app = `app-${randomUUID().slice(0, 8)}`;
    const pointer = JSON.stringify({ bucket: emulators.bucket, size: 10, eventId: "0".repeat(64) });
    const records = [
      sqsRecord(pointer, {
        trigger: "message_sent",
        appId: app,
        receivedAt: Date.now(),
        eventId: "0".repeat(64),
        bodyLocation: "s3",
      }),
      sqsRecord("{}", {
        trigger: "message_sent",
        appId: app,
        receivedAt: "yesterday",
        eventId: "1".repeat(64),
      }),
    ];

    // Act
    const response = await projectSqsBatch(sqsEvent(records), undefined, deps, silent());

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: emulators.bucket, Prefix: `quarantine/app=${app}/` }),
    );
    const errors: string[] = [];
    for (const object of listed.Contents ?? []) {
      const text = await (
        await s3.send(new GetObjectCommand({ Bucket: emulators.bucket, Key: object.Key }))
      ).Body?.transformToString();
      errors.push(JSON.parse(text ?? "{}").error);
    }
    expect(errors.sort()).toEqual([
      expect.stringContaining("invalid event message attributes: receivedAt"),
      expect.stringContaining("invalid oversize pointer: key"),
    ]);
  });
});
