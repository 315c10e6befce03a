/**
 * bench:cost's hot group (#57): a class of 500 joining one group within two minutes, 5% of the
 * joins retried by the platform 10 or 30 s later (the retry rate bench:activity models), received
 * in order; its write units per delivery and the size of its group item's writes, beside the
 * simulator's mix of the same run; and the same class as live traffic brings it, each join of the
 * group in a batch of its own (so each writes the group item), where the bench's drain folds 40.
 */
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { appKey } from "@webhook-backend/stream/projections/keys";
import { localTableNames } from "../../tools/local/provision";
import { template } from "../../tools/simulate/templates";
import type { measure } from "./run";
import type { Bench } from "./start";

/** The live run's class is in an app of its own: its items are new, as the first run's were. */
export const HOT_GROUP_LIVE_APP = "cost-hot-live-app";

export const HOT_GROUP = {
  app: "cost-hot-app",
  guid: "class-1",
  members: 500,
  withinMs: 120_000,
  retried: 0.05,
};

/** The class's deliveries in the order received: each join once, every twentieth again 10 or 30 s later. */
export function hotGroupPlan(
  app = HOT_GROUP.app,
  start = Date.UTC(2026, 10, 30, 9),
): Array<{ body: string; at: number }> {
  const plan: Array<{ body: string; at: number }> = [];
  const every = Math.round(1 / HOT_GROUP.retried);
  for (let i = 0; i < HOT_GROUP.members; i++) {
    const at = start + Math.floor((i * HOT_GROUP.withinMs) / HOT_GROUP.members);
    const join = template("group_member_joined");
    const uid = `student-${String(i + 1).padStart(3, "0")}`;
    const [member] = Object.values(join.data.members);
    join.appId = app;
    join.data.members = { [uid]: { ...(member as object), uid, name: `Student ${i + 1}` } };
    Object.assign(join.data.group, {
      guid: HOT_GROUP.guid,
      name: "Morning class",
      membersCount: i + 2,
      onlineMembersCount: i + 2,
      updatedAt: Math.floor(at / 1000),
    });
    const body = JSON.stringify(join);
    plan.push({ body, at });
    if (i % every === every / 2) plan.push({ body, at: at + ((i / every) % 2 < 1 ? 10_000 : 30_000) });
  }
  return plan.sort((a, b) => a.at - b.at);
}

type Run = Awaited<ReturnType<typeof measure>>;

/** A run's write units per delivery on the memberships table and its byUser index. */
const memberUnits = (r: Run) =>
  (r.writeUnitsByResource.Memberships ?? 0) + (r.writeUnitsByResource["Memberships.byUser"] ?? 0);

/** The class's group as the table holds it after the run: its members count (the last join reported `members + 1`). */
export async function hotGroupCount(bench: Bench, app = HOT_GROUP.app): Promise<unknown> {
  const { Item } = await bench.direct.dynamo.send(
    new GetItemCommand({
      TableName: localTableNames("cost").groups,
      Key: { pk: { S: appKey(app, HOT_GROUP.guid) } },
      ConsistentRead: true,
    }),
  );
  return Item ? unmarshall(Item).membersCount : undefined;
}

/** The hot group beside the mix: write units per delivery (all, groups, memberships) and the item sizes. */
export function printHotGroup(mix: Run, hot: Run, live: Run, membersCount: readonly unknown[]) {
  const row = (run: string, r: Run) => {
    const groups = r.itemSizes.Groups;
    const over = (table: string) => r.itemSizes[table]?.overOneKb ?? 0;
    return {
      run,
      deliveries: r.deliveries,
      "write units / delivery": Number(r.writeUnitsPerEvent.toFixed(4)),
      "… groups": Number((r.writeUnitsByResource.Groups ?? 0).toFixed(4)),
      "… memberships (+ byUser)": Number(memberUnits(r).toFixed(4)),
      "group item writes": groups?.writes ?? 0,
      "group item max bytes": groups?.maxBytes ?? 0,
      "group item p50 bytes": groups?.p50Bytes ?? 0,
      "writes over 1 KB: groups, memberships, presence": `${over("Groups")}, ${over("Memberships")}, ${over("Presence")}`,
    };
  };
  console.log(
    `a hot group (#57): ${HOT_GROUP.members} joins of one group within ${HOT_GROUP.withinMs / 1000} s, ${HOT_GROUP.retried * 100}% retried 10 or 30 s later, received in order, beside the simulator's mix (one app) of this run:`,
  );
  console.table([
    row("simulator's mix, 1 app", mix),
    row("hot group", hot),
    row("hot group, a join a batch (live traffic)", live),
  ]);
  console.log(
    `the hot group's write units per delivery are ${(hot.writeUnitsPerEvent / mix.writeUnitsPerEvent).toFixed(2)}x the mix's, its new members' items and byUser entries alone ${(memberUnits(hot) / mix.writeUnitsPerEvent).toFixed(2)}x; the class's group ends with membersCount ${membersCount.join(" and ")} (its last join reported ${HOT_GROUP.members + 1})`,
  );
}
