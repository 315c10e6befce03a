/**
 * bench:cost's hot group (#57): a class of 500 joining one group within two minutes, 5% of the
 * joins retried by the platform 10 or 30 s later (the retry rate bench:activity models), received
 * in order; its write units per delivery and the size of its group item's writes, beside the
 * simulator's mix of the same run.
 */
import { template } from "../../tools/simulate/templates";
import type { measure } from "./run";

export const HOT_GROUP = {
  app: "cost-hot-app",
  guid: "class-1",
  members: 500,
  withinMs: 120_000,
  retried: 0.05,
};

/** The class's deliveries in the order received: each join once, every twentieth again 10 or 30 s later. */
export function hotGroupPlan(start = Date.UTC(2026, 10, 30, 9)): Array<{ body: string; at: number }> {
  const plan: Array<{ body: string; at: number }> = [];
  const every = Math.round(1 / HOT_GROUP.retried);
  for (let i = 0; i < HOT_GROUP.members; i++) {
    const at = start + Math.floor((i * HOT_GROUP.withinMs) / HOT_GROUP.members);
    const join = template("group_member_joined");
    const uid = `student-${String(i + 1).padStart(3, "0")}`;
    const [member] = Object.values(join.data.members);
    join.appId = HOT_GROUP.app;
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

/** The hot group beside the mix: write units per delivery (all, groups, memberships) and the item sizes. */
export function printHotGroup(mix: Run, hot: Run) {
  const row = (run: string, r: Run) => {
    const groups = r.itemSizes.Groups;
    const over = (table: string) => r.itemSizes[table]?.overOneKb ?? 0;
    return {
      run,
      deliveries: r.deliveries,
      "write units / delivery": Number(r.writeUnitsPerEvent.toFixed(4)),
      "… groups": Number((r.writeUnitsByResource.Groups ?? 0).toFixed(4)),
      "… memberships (+ byUser)": Number(
        (
          (r.writeUnitsByResource.Memberships ?? 0) + (r.writeUnitsByResource["Memberships.byUser"] ?? 0)
        ).toFixed(4),
      ),
      "group item writes": groups?.writes ?? 0,
      "group item max bytes": groups?.maxBytes ?? 0,
      "group item p50 bytes": groups?.p50Bytes ?? 0,
      "writes over 1 KB: groups, memberships, presence": `${over("Groups")}, ${over("Memberships")}, ${over("Presence")}`,
    };
  };
  console.log(
    `a hot group (#57): ${HOT_GROUP.members} joins of one group within ${HOT_GROUP.withinMs / 1000} s, ${HOT_GROUP.retried * 100}% retried 10 or 30 s later, received in order, beside the simulator's mix (one app) of this run:`,
  );
  console.table([row("simulator's mix, 1 app", mix), row("hot group", hot)]);
  console.log(
    `the hot group's write units per delivery are ${(hot.writeUnitsPerEvent / mix.writeUnitsPerEvent).toFixed(2)}x the mix's; its group item's: ${((hot.writeUnitsByResource.Groups ?? 0) / (mix.writeUnitsByResource.Groups || 1)).toFixed(2)}x`,
  );
}
