import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { dayActivity } from "../../shared/analytics/rollup";
import type { BlobStore } from "../../shared/ports/blob-store";
import { archiveBatch } from "../../shared/projector/raw-archive";
import { expectedActivity } from "../../tools/simulate/expected-activity";
import type { GeneratedEvent } from "../../tools/simulate/generator";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { fixture, type Loose } from "../support/fixtures";

const { s3 } = testClients();
let bucket: string;
let archive: BlobStore;

beforeAll(async () => {
  bucket = await createBucket(s3, uniqueName("sessions"));
  archive = s3BlobStore(s3, bucket);
});

/** The templates' call and meeting: 2023-10-10, from 10:41:41 UTC (1696934501). */
const DAY = "2023-10-10";

/** A session event of `appId` from its template, changed by `edit`, as the platform would send it. */
function sessionEvent(appId: string, trigger: string, edit: (data: Loose) => void, text = (t: string) => t) {
  const event = fixture(trigger);
  event.appId = appId;
  edit(event.data);
  return { trigger, appId, body: text(JSON.stringify(event)), at: 0 } satisfies GeneratedEvent;
}

/** Archives the events, each received a second after its position, and computes the day both ways. */
async function bothWays(appId: string, events: GeneratedEvent[]) {
  const receivedAt = (e: GeneratedEvent) => Date.UTC(2023, 9, 10, 12) + events.indexOf(e) * 1000;
  await archiveBatch(
    events.map((e) => {
      const eventId = createHash("sha256").update(e.body).digest("hex");
      return {
        messageId: eventId,
        eventId,
        receivedAt: receivedAt(e),
        trigger: e.trigger,
        appId,
        body: e.body,
      };
    }),
    archive,
  );
  const sql = (await dayActivity(duckDbEngine({ s3, bucket }), appId, DAY)).activity;
  const expected = expectedActivity(events, receivedAt).get(appId)?.get(DAY);
  return { sql, expected };
}

describe("call and meeting figures from the archive, on DuckDB and in the independent computation", () => {
  it("reads integer times written with a fraction (1696934553.0) as integers, the same cast Athena takes", async () => {
    // Prepare: the template's call (52 s) with every time written as a float.
    const appId = uniqueName("app");
    const floats = (t: string) =>
      t.replace(/("(?:created_at|destroyed_at|joined_at|left_at)":)(\d+)/g, "$1$2.0");
    const ended = sessionEvent(appId, "call_ended", () => undefined, floats);
    expect(ended.body).toContain('"destroyed_at":1696934553.0');

    // Act
    const { sql, expected } = await bothWays(appId, [ended]);

    // Assess
    expect(sql.figures.call_seconds).toBe(52);
    expect(sql.figures).toEqual(expected?.figures);
  });
});
