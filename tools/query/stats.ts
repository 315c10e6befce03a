import { DescribeTableCommand } from "@aws-sdk/client-dynamodb";
import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { shardQueries } from "../../shared/platform/tables";
import { readStats, stateDir } from "../local/state";
import type { Target } from "../target";
import { cloudWatchOutcomes } from "./cloudwatch";

async function countQuery(
  target: Target,
  input: ConstructorParameters<typeof QueryCommand>[0],
): Promise<number> {
  const doc = documentClient(target.dynamo);
  let count = 0;
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(new QueryCommand({ ...input, Select: "COUNT", ExclusiveStartKey }));
    count += out.Count ?? 0;
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return count;
}

/**
 * `query stats` (and the console's counters): item counts (per app over the sharded indexes, a
 * query per shard with Select COUNT, never a Scan; else DescribeTable's ItemCount) and the
 * functions' outcome counts (locally the stack's ledger; deployed the last 24 hours of CloudWatch).
 */
export async function outcomeStats(target: Target, appId: string | undefined, dir: string | undefined) {
  const items: Record<string, number> = {};
  if (appId) {
    // Counted over the sharded indexes (a query per shard, Select COUNT): never a Scan.
    const countShards = async (table: string, index: Parameters<typeof shardQueries>[1]) => {
      let n = 0;
      for (const query of shardQueries(appId, index))
        n += await countQuery(target, { TableName: table, ...query });
      return n;
    };
    items.sessionsWithRecordings = await countShards(target.tables.sessions, "withRecording");
    items.onlineUsers = await countShards(target.tables.presence, "online");
  } else {
    for (const [name, tableName] of Object.entries(target.tables)) {
      // DescribeTable's ItemCount: live on DynamoDB Local, refreshed about every six hours in AWS.
      items[name] =
        (await target.dynamo.send(new DescribeTableCommand({ TableName: tableName }))).Table?.ItemCount ?? 0;
    }
  }
  if (target.kind !== "local") return { app: appId, items, outcomes: await cloudWatchOutcomes() };
  const local = readStats(stateDir(dir));
  return {
    app: appId,
    items,
    outcomes: appId ? (local.apps[appId] ?? {}) : local.total,
    // WARN and ERROR lines by function and reason (locally: every failure, not only counted outcomes).
    failures: local.failures,
  };
}

export type StatsReport = Awaited<ReturnType<typeof outcomeStats>>;
