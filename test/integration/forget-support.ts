import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import type { ForgetDependencies } from "../../shared/erasure/forget";
import { UNVERSIONED } from "../../shared/erasure/object-versions";
import type { TableNames } from "../../shared/platform/tables";
import type { QueuedEvent } from "../../shared/projector/queued-event";
import { fixture, type Loose } from "../support/fixtures";
import { queuedAt } from "../support/queued";

/*
 * What the erasure's integration tests (forget*.int.test.ts) share: the platform's sample users,
 * deliveries made from the fixtures, an erasure's dependencies over the emulators, and the items
 * of a table set.
 */

/** The platform's sample users: the one erased, and others. */
export const U1 = "cometchat-uid-1";
export const U2 = "cometchat-uid-2";
export const U3 = "cometchat-uid-3";
export const U4 = "cometchat-uid-4";

/** A delivery of the fixture `trigger` for `appId`, edited, received at `receivedAt`. */
export function delivery(
  trigger: string,
  appId: string,
  receivedAt: number,
  edit: (body: Loose) => void = () => {},
): QueuedEvent {
  const body = fixture(trigger);
  body.appId = appId;
  edit(body);
  return queuedAt({ trigger, appId, body: JSON.stringify(body) }, receivedAt);
}

/** A user entity as payloads carry it. */
export function entity(uid: string, name: string): Loose {
  return { uid, name, status: "available", role: "default", lastActiveAt: 1696932834 };
}

/**
 * A group `guid` owned by U3 (its creation, U3 its member) that U1, the user erased, joins a second
 * later: the first deliveries of the erasure's histories.
 */
export function groupJoinedByU1(appId: string, guid: string, at: number, more: Loose = {}): QueuedEvent[] {
  const group = (g: Loose) => ({ ...g, ...more, guid, conversationId: `group_${guid}`, owner: U3 });
  return [
    delivery("group_created", appId, at, (b) => {
      b.data.group = group(b.data.group);
      b.data.members = { [U3]: entity(U3, "Carol Ray") };
    }),
    delivery("group_member_joined", appId, at + 1000, (b) => {
      b.data.group = group(b.data.group);
      b.data.members = { [U1]: entity(U1, "Andrew Joseph") };
    }),
  ];
}

/** The emulators an erasure runs on, and where its state lives. */
export interface ErasureSite {
  dynamo: DynamoDBClient;
  s3: ForgetDependencies["s3"];
  bucket: string;
  tables: TableNames;
  activityTable: string;
  now: number;
}

/** An erasure's dependencies over the emulators: DuckDB's search and rollup, no versions (fauxqs keeps none). */
export function erasureDeps(site: ErasureSite, more: Partial<ForgetDependencies> = {}): ForgetDependencies {
  const doc = documentClient(site.dynamo);
  const { s3, bucket } = site;
  return {
    s3,
    bucket,
    search: duckDbEngine({ s3, bucket, objectPaths: true }),
    versions: UNVERSIONED,
    doc,
    tables: site.tables,
    state: { doc, tableName: site.activityTable },
    rollup: {
      engine: duckDbEngine({ s3, bucket }),
      store: dynamoActivityStore(doc, site.activityTable),
      now: () => site.now,
      graceMs: 7_200_000,
    },
    now: () => site.now,
    ...more,
  };
}

/** Every item of the projection tables of one app, by table. */
export async function appItems(
  dynamo: DynamoDBClient,
  tables: TableNames,
  appId: string,
): Promise<Record<string, Array<Record<string, unknown>>>> {
  const doc = documentClient(dynamo);
  const out: Record<string, Array<Record<string, unknown>>> = {};
  for (const table of PROJECTION_TABLE_NAMES) {
    const scanned = await doc.send(new ScanCommand({ TableName: tables[table], ConsistentRead: true }));
    out[table] = (scanned.Items ?? [])
      .filter((item) => item.appId === appId)
      .sort((a, b) => `${a.pk}|${a.uid ?? ""}`.localeCompare(`${b.pk}|${b.uid ?? ""}`));
  }
  return out;
}
