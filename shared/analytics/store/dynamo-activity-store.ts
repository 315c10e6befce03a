import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import { queryAll } from "../../adapters/dynamo-reads";
import { ACTIVITY_REPLACE_ATTEMPTS } from "../../platform/constants";
import { ItemContentionError } from "../../platform/errors";
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
    platforms: (item.platforms as Record<string, number> | undefined) ?? {},
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
 * top-list ranks that changed, the ranks no longer held deleted, and the day's item last, with a
 * new `version`, on condition that its version is the one read before the diff and that no run
 * computed later wrote it. Two runs at once (the schedule and a manual `rollup`) cannot leave a
 * day mixed: the second to commit finds the version moved, reads again and writes its diff over
 * what is there now (`ACTIVITY_REPLACE_ATTEMPTS` attempts, then `ItemContentionError`), or learns
 * it was superseded. A failed run leaves the day as it was.
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
      for (let attempt = 1; ; attempt++) {
        const outcome = await replaceOnce(write);
        if (outcome !== "conflict") return outcome === "written";
        if (attempt >= ACTIVITY_REPLACE_ATTEMPTS)
          throw new ItemContentionError(
            `activity of ${write.appId} on ${write.day}: another run wrote it during each of ${attempt} attempts`,
          );
      }
    },
  };

  /**
   * One attempt: reads the day item (its version) and the detail items, strongly consistent,
   * and writes the difference on condition that the version is still the one read (and no run
   * computed later wrote the day). Every write of a day's items is such a transaction, which
   * bumps the version: a run that committed after this one read makes it a conflict, never a
   * diff applied over someone else's items.
   */
  async function replaceOnce(write: DayWrite): Promise<"written" | "superseded" | "conflict"> {
    const pk = dayKey(write.appId, write.day);
    const { Item: stored } = await doc.send(
      new GetCommand({
        TableName: tableName,
        Key: { pk: daysKey(write.appId), sk: write.day },
        ConsistentRead: true,
      }),
    );
    if (stored && Number(stored.computedAt) > write.computedAt) return "superseded";
    const version = stored?.version === undefined ? undefined : Number(stored.version);
    const current = new Map(
      (
        await queryAll(doc, {
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": pk },
          ConsistentRead: true,
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
          platforms: write.platforms,
          computedAt: write.computedAt,
          final: write.final,
          bytesScanned: write.bytesScanned,
          version: (version ?? 0) + 1,
        },
        ...versionCondition(stored !== undefined, version, write.computedAt),
      },
    });
    try {
      await doc.send(new TransactWriteCommand({ TransactItems: actions }));
      return "written";
    } catch (error) {
      // The day's version moved (or a run computed later wrote it: the next attempt tells),
      // or another transaction was writing these items at that moment.
      const conflict =
        error instanceof TransactionCanceledException &&
        (error.CancellationReasons ?? []).some(
          (r) => r.Code === "ConditionalCheckFailed" || r.Code === "TransactionConflict",
        );
      if (conflict) return "conflict";
      throw error;
    }
  }
}

/** The day item's write condition: still the version read (none, or absent on a day written before versions), and no later run. */
function versionCondition(existed: boolean, version: number | undefined, computedAt: number) {
  if (!existed) return { ConditionExpression: "attribute_not_exists(pk)" };
  return {
    ConditionExpression: `${version === undefined ? "attribute_not_exists(#version)" : "#version = :version"} AND computedAt <= :computedAt`,
    ExpressionAttributeNames: { "#version": "version" },
    ExpressionAttributeValues: {
      ":computedAt": computedAt,
      ...(version === undefined ? {} : { ":version": version }),
    },
  };
}
