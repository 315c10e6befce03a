/**
 * `query activity`: an app's activity figures per day, hour, top list, heatmap, users, retention
 * or groups (`analytics/activity-view`), and, when no day is stored, whether the app ever
 * delivered (exit 3 with the nearest app ids, not "not computed").
 */
import type { Command } from "commander";
import type { ActivityStore } from "../../../shared/analytics/store/activity-store";
import { DEFAULT_GRACE_MINUTES } from "../../analytics/activity-view/options";
import { activityView } from "../../analytics/activity-view/view";
import { activityStoreFor, userSetsFor } from "../../analytics/engines";
import { TERMINAL_COLUMNS } from "../../cli/format";
import { integer, oneOf, UsageError, utcDayOption } from "../../cli/program";
import { assertAppDelivered } from "../known-apps";
import { app, withApp } from "./helpers";
import type { Run } from "./runner";

/** Adds `activity`: an app's activity figures. */
export function addActivityCommand(program: Command, run: Run): void {
  withApp(
    program
      .command("activity")
      .description(
        "an app's activity figures per day, or per hour, or its top groups or users (the rollup's)",
      )
      .requiredOption("--from <date>", "first UTC day, YYYY-MM-DD (or today, yesterday)", utcDayOption())
      .requiredOption("--to <date>", "last UTC day, YYYY-MM-DD (or today, yesterday)", utcDayOption())
      .option("--hourly", "each day's hours")
      .option("--top <what>", "each day's busiest groups or users", oneOf("groups", "users"))
      .option("--calls", "the calls and meetings that ended: by duration, and participants per session")
      .option("--latency", "first-response, delivery and read times: counts and percentiles (seconds)")
      .option("--heatmap", "the most users online, and calls in progress, at once per weekday and hour")
      .option("--users", "DAU, WAU, MAU, stickiness and new users per day (closed days' user sets)")
      .option("--retention", "new users' D+1, D+7, D+30 retention, and weekly cohorts")
      .option(
        "--groups",
        "groups and members per day: joined, left, members at start and end, churn, average size",
      )
      .option("--limit <n>", "entries of a top list (at most 25)", integer(1, 25), 10)
      .option("--wide", `every figure, however wide (by default the text fits ${TERMINAL_COLUMNS} columns)`)
      .option(
        "--grace-minutes <minutes>",
        "when a day closes: its end plus this (the rollup's grace period)",
        integer(0, 1440),
        DEFAULT_GRACE_MINUTES,
      ),
  ).action(
    run(async (_q, o, target) => {
      if (String(o.from) > String(o.to))
        throw new UsageError(
          `--from ${String(o.from)} is after --to ${String(o.to)}: give the earlier day first`,
        );
      // An app without a stored day here may never have delivered: then say so (exit 3), not "not computed".
      const store = activityStoreFor(target);
      let daysFound = 0;
      let daysRead = false;
      const watched: ActivityStore = {
        ...store,
        days: async (...args) => {
          daysRead = true;
          const days = await store.days(...args);
          daysFound += days.length;
          return days;
        },
      };
      const view = await activityView(
        watched,
        {
          app: app(o),
          from: String(o.from),
          to: String(o.to),
          hourly: Boolean(o.hourly),
          top: o.top as "groups" | "users" | undefined,
          calls: Boolean(o.calls),
          latency: Boolean(o.latency),
          heatmap: Boolean(o.heatmap),
          users: Boolean(o.users),
          retention: Boolean(o.retention),
          groups: Boolean(o.groups),
          limit: Number(o.limit),
          wide: Boolean(o.wide),
          graceMinutes: Number(o.graceMinutes),
          targetArgs: o.stack
            ? ` --stack ${String(o.stack)}`
            : o.stateDir
              ? ` --state-dir ${String(o.stateDir)}`
              : "",
        },
        o.users || o.retention || o.groups ? userSetsFor(target) : undefined,
      );
      if (!daysRead || daysFound === 0)
        await assertAppDelivered(target, app(o), o.stateDir as string | undefined);
      return view;
    }),
  );
}
