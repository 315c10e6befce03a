import { GetObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { memoryItemStore } from "../../shared/adapters/memory-item-store";
import { ItemLimitError } from "../../shared/platform/errors";
import { projectSqsBatch } from "../../shared/projector/batch";
import { projectionStores } from "../../shared/projector/stores";
import { ingestRecordFor, sqsEvent } from "../../tools/local/sqs-event";
import { uniqueName } from "../support/aws";
import { projectorOnEmulators } from "../support/emulator-projector";
import { fixture, memberAddedBody } from "../support/fixtures";

const emulators = projectorOnEmulators("key-limits-test");
const { dynamo, s3, silent, tableSet, depsFor } = emulators;

/** The quarantine records of an app in the test bucket. */
async function quarantined(app: string): Promise<Array<{ eventId: string; error: string }>> {
  const listed = await s3.send(
    new ListObjectsV2Command({
      Bucket: emulators.bucket,
      Prefix: `quarantine/app=${encodeURIComponent(app)}/`,
    }),
  );
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const object = await s3.send(new GetObjectCommand({ Bucket: emulators.bucket, Key }));
      return JSON.parse(await (object.Body?.transformToString() ?? "{}"));
    }),
  );
}

describe("keys DynamoDB cannot hold", () => {
  it("an event whose sort key is over 1,024 bytes is quarantined with that reason; its batch-mates are projected", async () => {
    // Prepare: alice and bob, and a member whose uid (the memberships sort key) is 1,100 characters.
    const app = uniqueName("app");
    const names = await tableSet();
    const stores = projectionStores(dynamo, names);
    const long = "u".repeat(1100);
    const records = ["alice", "bob", long].map((uid) => ingestRecordFor(memberAddedBody(app, "g-1", uid)));

    // Act
    const response = await projectSqsBatch(sqsEvent(records), undefined, depsFor(stores), silent());

    // Assess: nothing to retry; the two good members are in the table, the third is quarantined.
    expect(response.batchItemFailures).toEqual([]);
    for (const uid of ["alice", "bob"])
      expect(await stores.memberships.get({ pk: `${app}#g-1`, sk: uid })).toMatchObject({ status: "member" });
    const records3 = await quarantined(app);
    expect(records3).toHaveLength(1);
    expect(records3[0]?.error).toMatch(/memberships.*sort key.*1,?100 bytes.*1,?024/i);
  });

  it("an event whose partition key is over 2,048 bytes is quarantined; a group's other events are not held up", async () => {
    const app = uniqueName("app");
    const names = await tableSet();
    const stores = projectionStores(dynamo, names);
    const longGuid = "g".repeat(2100);
    const records = [memberAddedBody(app, "g-ok", "carol"), memberAddedBody(app, longGuid, "dave")].map(
      (body) => ingestRecordFor(body),
    );

    const response = await projectSqsBatch(sqsEvent(records), undefined, depsFor(stores), silent());

    expect(response.batchItemFailures).toEqual([]);
    expect(await stores.memberships.get({ pk: `${app}#g-ok`, sk: "carol" })).toMatchObject({
      status: "member",
    });
    expect(await stores.groups.get({ pk: `${app}#g-ok` })).toMatchObject({ guid: "g-ok" });
    const [record] = await quarantined(app);
    expect(record?.error).toMatch(/partition key.*2,048/i);
  });
});

/** A meeting of `app` that ended with `occupants` stints of `nameLength`-character names. */
function meetingEnded(app: string, sessionId: string, occupants: number, nameLength: number): string {
  const e = fixture("meeting_ended");
  e.appId = app;
  e.data.sessionId = sessionId;
  e.data.all_occupants = Array.from({ length: occupants }, (_, i) => ({
    joined_at: 1_696_934_692 + (i % 600),
    audio_call: "false",
    left_at: 1_696_934_730 + 600,
    name: `${String(i).padStart(6, "0")}-${"n".repeat(nameLength)}`,
  }));
  return JSON.stringify(e);
}

describe("items that valid events grow past DynamoDB's 400 KB", () => {
  it("a meeting whose roster would not fit keeps the earliest stints that do, says so, and is not retried", async () => {
    // Prepare: 6,000 occupants with 100-character names: ~900 KB of participants as stored.
    const app = uniqueName("app");
    const stores = projectionStores(dynamo, await tableSet());
    const body = meetingEnded(app, "v1.us.big", 6000, 100);

    // Act
    const response = await projectSqsBatch(
      sqsEvent([ingestRecordFor(body)]),
      undefined,
      depsFor(stores),
      silent(),
    );

    // Assess: written (under 400 KB), the participants it could not keep are said to be omitted.
    expect(response.batchItemFailures).toEqual([]);
    const session = await stores.sessions.get({ pk: `${app}#v1.us.big` });
    expect(session?.outcome).toBe("ended");
    expect(session?.participantsOmitted).toBe(true);
    const kept = Object.values(session?.participants ?? {});
    expect(kept.length).toBeGreaterThan(500);
    expect(kept.length).toBeLessThan(6000);
    // The earliest stints are the ones kept: every stint that joined before the last kept one is.
    const lastKept = Math.max(...kept.map((p) => p.joinedAt));
    const joinedBefore = Array.from({ length: 6000 }, (_, i) => (1_696_934_692 + (i % 600)) * 1000).filter(
      (t) => t < lastKept,
    );
    expect(kept.filter((p) => p.joinedAt < lastKept)).toHaveLength(joinedBefore.length);
  });

  it("an event that alone makes an item too large for DynamoDB is quarantined with why, not retried", async () => {
    // A group renamed to a 450 KB name: the sender's fault, and it would never be stored.
    const app = uniqueName("app");
    const stores = projectionStores(dynamo, await tableSet());
    const e = fixture("group_updated");
    e.appId = app;
    e.data.group.guid = "g-huge";
    e.data.group.name = "x".repeat(450_000);

    const response = await projectSqsBatch(
      sqsEvent([ingestRecordFor(JSON.stringify(e)), ingestRecordFor(memberAddedBody(app, "g-2", "erin"))]),
      undefined,
      depsFor(stores),
      silent(),
    );

    expect(response.batchItemFailures).toEqual([]);
    expect(await stores.memberships.get({ pk: `${app}#g-2`, sk: "erin" })).toMatchObject({
      status: "member",
    });
    const [record] = await quarantined(app);
    expect(record?.error).toMatch(/Groups: item.*400 KB/i);
  });
});

describe("an empty map key (#57)", () => {
  it("DynamoDB and the in-memory store both refuse it as a key limit, naming where it is: quarantined, never dead-lettered", async () => {
    // Prepare: a session item with a transcript under "" (what a transcript with neither tid nor
    // startTime was keyed by before #57), for the real store and the tests' in-memory one.
    const names = await tableSet();
    const stores = [projectionStores(dynamo, names).sessions, memoryItemStore()];
    const key = { pk: `${uniqueName("app")}#s1` };

    for (const store of stores) {
      // Act
      const write = store.apply(
        key,
        () => ({ ...key, transcripts: { "": { sourceUrl: "https://t" } } }) as never,
      );

      // Assess: the projector's quarantine error, not DynamoDB's ValidationException.
      await expect(write).rejects.toBeInstanceOf(ItemLimitError);
      await expect(write).rejects.toThrow(/an empty attribute name in transcripts/);
    }
  });
});
