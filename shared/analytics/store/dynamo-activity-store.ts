import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { queryAll } from "../../adapters/dynamo-reads";
import { canonicalJson } from "../../projections/canonical-json";
import { FIGURE_NAMES, type Figures, type GroupActivity, TOP_LIMIT, type UserActivity } from "../figures";
import type { ActivityStore, DayWrite, StoredDay } from "./activity-store";

type Item = Record<string, unknown>;
type Action = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

const daysKey = (appId: string) => `${appId}#days`;
const dayKey = (appId: string, day: string) => `${appId}#${day}`;
const rank = (n: number) => String(n).padStart(3, "0");

function figuresOf(item: Item): Figures {
  return Object.fromEntries(FIGURE_NAMES.map((name) => [name, Number(item[name] ?? 0)])) as Figures;
}

function storedDay(item: Item): StoredDay {
  return {
    appId: String(item.appId),
    day: String(item.sk),
    figures: figuresOf(item),
    messageKinds: (item.messageKinds as Record<string, number> | undefined) ?? {},
    computedAt: Number(item.computedAt),
    final: item.final === true,
    bytesScanned: Number(item.bytesScanned ?? 0),
  };
}

/** The detail items of a day (hours and top lists), by sort key. */
function detailItems(write: DayWrite): Map<string, Item> {
  const pk = dayKey(write.appId, write.day);
  const items = new Map<string, Item>();
  for (const { hour, figures } of write.hours)
    items.set(`hour#${String(hour).padStart(2, "0")}`, {
      pk,
      sk: `hour#${String(hour).padStart(2, "0")}`,
      hour,
      ...figures,
    });
  write.topGroups.slice(0, TOP_LIMIT).forEach((g, i) => {
    items.set(`top#groups#${rank(i + 1)}`, { pk, sk: `top#groups#${rank(i + 1)}`, rank: i + 1, ...g });
  });
  write.topUsers.slice(0, TOP_LIMIT).forEach((u, i) => {
    items.set(`top#users#${rank(i + 1)}`, { pk, sk: `top#users#${rank(i + 1)}`, rank: i + 1, ...u });
  });
  return items;
}

/**
 * The activity table on DynamoDB. A day is replaced in one `TransactWriteItems`: the hours and
 * top-list ranks that changed, the ranks no longer held deleted, and the day's item last, on
 * condition that no run computed later wrote it. A failed run leaves the day as it was.
 *
 * @example const store = dynamoActivityStore(documentClient(dynamo), "local-activity")
 */
export function dynamoActivityStore(doc: DynamoDBDocumentClient, tableName: string): ActivityStore {
  const details = (appId: string, day: string, prefix: string, limit?: number) =>
    doc
      .send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
          ExpressionAttributeValues: { ":pk": dayKey(appId, day), ":prefix": prefix },
          Limit: limit,
        }),
      )
      .then((out) => out.Items ?? []);
  return {
    async day(appId, day) {
      const out = await doc.send(
        new GetCommand({ TableName: tableName, Key: { pk: daysKey(appId), sk: day } }),
      );
      return out.Item ? storedDay(out.Item) : undefined;
    },
    async days(appId, from, to) {
      const items = await queryAll(doc, {
        TableName: tableName,
        KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
        ExpressionAttributeValues: { ":pk": daysKey(appId), ":from": from, ":to": to },
      });
      return items.map(storedDay);
    },
    async hours(appId, day) {
      return (await details(appId, day, "hour#")).map((item) => ({
        hour: Number(item.hour),
        figures: figuresOf(item),
      }));
    },
    async topGroups(appId, day, limit) {
      return (await details(appId, day, "top#groups#", limit)).map((item) => ({
        groupId: String(item.groupId),
        messages: Number(item.messages),
        activeMembers: Number(item.activeMembers),
      })) satisfies GroupActivity[];
    },
    async topUsers(appId, day, limit) {
      return (await details(appId, day, "top#users#", limit)).map((item) => ({
        uid: String(item.uid),
        messages: Number(item.messages),
      })) satisfies UserActivity[];
    },
    async replace(write) {
      const pk = dayKey(write.appId, write.day);
      const current = new Map(
        (
          await queryAll(doc, {
            TableName: tableName,
            KeyConditionExpression: "pk = :pk",
            ExpressionAttributeValues: { ":pk": pk },
          })
        ).map((item) => [String(item.sk), item]),
      );
      const next = detailItems(write);
      const actions: Action[] = [];
      for (const [sk, item] of next)
        if (!current.has(sk) || canonicalJson(current.get(sk)) !== canonicalJson(item))
          actions.push({ Put: { TableName: tableName, Item: item } });
      for (const sk of current.keys())
        if (!next.has(sk)) actions.push({ Delete: { TableName: tableName, Key: { pk, sk } } });
      actions.push({
        Put: {
          TableName: tableName,
          Item: {
            pk: daysKey(write.appId),
            sk: write.day,
            appId: write.appId,
            ...write.figures,
            messageKinds: write.messageKinds,
            computedAt: write.computedAt,
            final: write.final,
            bytesScanned: write.bytesScanned,
          },
          ConditionExpression: "attribute_not_exists(computedAt) OR computedAt <= :computedAt",
          ExpressionAttributeValues: { ":computedAt": write.computedAt },
        },
      });
      try {
        await doc.send(new TransactWriteCommand({ TransactItems: actions }));
        return true;
      } catch (error) {
        const superseded =
          error instanceof TransactionCanceledException &&
          error.CancellationReasons?.at(-1)?.Code === "ConditionalCheckFailed";
        if (superseded) return false;
        throw error;
      }
    },
  };
}
