import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from "@aws-sdk/client-dynamodb";
import { APPS_TABLE } from "../platform/tables";

/**
 * The listener switch (#41): with no subscriber declared, the projector publishes only while a
 * temporary listener (`webhook listen`) is on. The listener writes one item of the apps table
 * (appId `_stream`, record `listeners`) with `until` (epoch ms) and renews it every minute; the
 * projector reads it at most once a minute per container (one eventually consistent GetItem of
 * one attribute: 0.5 read unit), so nothing is read per batch and nothing published once it lapses.
 */

/** The switch's key in the apps table: `_stream` is no app the platform issues (its app ids are hexadecimal). */
export const LISTENER_SWITCH_KEY = { appId: "_stream", record: "listeners" } as const;

/** How long the projector trusts what it read of the switch. */
export const LISTENER_SWITCH_CACHE_MS = 60_000;

/** How far ahead a listener sets `until`; it renews every `LISTENER_RENEW_MS`, so a crash leaves it on at most this long. */
export const LISTENER_LEASE_MS = 3 * 60_000;
export const LISTENER_RENEW_MS = 60_000;

const keyOf = () => ({
  [APPS_TABLE.partitionKey.name]: { S: LISTENER_SWITCH_KEY.appId },
  [APPS_TABLE.sortKey?.name ?? "record"]: { S: LISTENER_SWITCH_KEY.record },
});

/**
 * Reads the switch's `until` (undefined when no listener ever turned it on).
 *
 * @example await dynamoListenerUntil(dynamo, "apps")() // 1763000180000
 */
export function dynamoListenerUntil(
  client: DynamoDBClient,
  tableName: string,
): () => Promise<number | undefined> {
  return async () => {
    const out = await client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: keyOf(),
        ProjectionExpression: "#until",
        ExpressionAttributeNames: { "#until": "until" },
      }),
    );
    const until = Number(out.Item?.until?.N);
    return Number.isFinite(until) ? until : undefined;
  };
}

/**
 * Whether a listener is on, read through `readUntil` at most once per `cacheMs`. A failed read
 * keeps the last answer (off at first) and is tried again by the next call: the stream's switch
 * never fails a batch.
 *
 * @example const isOn = listenerSwitch(dynamoListenerUntil(dynamo, table)); if (await isOn()) publish()
 */
export function listenerSwitch(
  readUntil: () => Promise<number | undefined>,
  { cacheMs = LISTENER_SWITCH_CACHE_MS, now = Date.now }: { cacheMs?: number; now?: () => number } = {},
): () => Promise<boolean> {
  let until: number | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;
  return async () => {
    if (now() - readAt >= cacheMs)
      reading ??= readUntil()
        .then((value) => {
          until = value;
          readAt = now();
        })
        .catch(() => undefined)
        .finally(() => {
          reading = undefined;
        });
    await reading;
    return until !== undefined && until > now();
  };
}

/**
 * Turns the switch on until `until` (epoch ms), unless another listener already holds it on for
 * longer: a renewal never shortens another's.
 *
 * @example await turnListenersOn(dynamo, "apps", Date.now() + LISTENER_LEASE_MS)
 */
export async function turnListenersOn(
  client: DynamoDBClient,
  tableName: string,
  until: number,
): Promise<void> {
  try {
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: keyOf(),
        UpdateExpression: "SET #until = :until",
        ConditionExpression: "attribute_not_exists(#until) OR #until < :until",
        ExpressionAttributeNames: { "#until": "until" },
        ExpressionAttributeValues: { ":until": { N: String(until) } },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
