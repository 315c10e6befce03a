import { describe, expect, it } from "vitest";
import { archiveLease } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3ImportRecords } from "../../shared/adapters/import-records";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import type { DaySets } from "../../shared/analytics/figures";
import { readQuery } from "../../shared/analytics/queries";
import { s3UserSets, usersOverTime, writeDaySets } from "../../shared/analytics/user-sets";
import { addDays } from "../../shared/contracts/bucket-layout";
import { createActivityTable } from "../../tools/local/provision";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { usersOverTimeRows, weeklyCohortRows } from "../support/users-over-time";

/**
 * The figures count imported users (#43 item 2): an imported user exists from their `createdAt`
 * (else the day the platform confirmed them), so users over time count them as created that day
 * (`createdUsers`, active or not) and never as new on a later first action (`newUsers`, retention
 * and weekly cohorts), by TypeScript (`usersOverTime`, what `query activity --users` reads) and by
 * SQL on DuckDB (`users-over-time.sql`, `weekly-cohorts.sql`), day by day the same. fauxqs, DuckDB.
 */
const { s3, dynamo } = testClients();
const APP = "imported-app";
const D = (n: number) => addDays("2026-03-02", n); // a Monday
const at = (day: string, hour = 12) => Date.parse(`${day}T${String(hour).padStart(2, "0")}:00:00Z`) / 1000;

/** One app's sets of a day: its active users (with the createdAt a payload carried), nothing else. */
const usersOf = (users: DaySets["users"]): Map<string, DaySets> =>
  new Map([[APP, { users, conversations: [], members: [], deletions: [] }]]);

describe("users over time with imported users", () => {
  it("counts an imported user as created on their createdAt and never new on a later first action, in TypeScript and in SQL alike", async () => {
    // Prepare: 14 closed days. Imported: `old` (created long ago, first active on day 2), `imp4`
    // (created on day 4 and first active that day), `idle` (created on day 1, never active),
    // `late` (no createdAt, imported on day 9 after a first action on day 3). Not imported: `plain`
    // (first active on day 2) and `fresh` (day 4, its payload says created on day 4).
    const bucket = await createBucket(s3, uniqueName("imported-users"));
    const activityTable = uniqueName("activity");
    await createActivityTable(dynamo, activityTable);
    const sets = s3UserSets(s3, bucket);
    const active: Record<number, DaySets["users"]> = {
      2: [{ uid: "old" }, { uid: "plain" }],
      3: [{ uid: "late" }, { uid: "plain" }],
      4: [
        { uid: "fresh", createdAt: at(D(4), 8) },
        { uid: "imp4", createdAt: at(D(5)) },
      ],
      5: [{ uid: "old" }],
      9: [{ uid: "imp4" }, { uid: "plain" }],
      11: [{ uid: "old" }, { uid: "fresh" }],
    };
    // `bg` is active every day (SQL's days are those with an active user), from day 0.
    for (let n = 0; n < 14; n++)
      await writeDaySets(sets, D(n), usersOf([{ uid: "bg" }, ...(active[n] ?? [])]));
    const records = s3ImportRecords(s3, bucket);
    await records.addBatch(APP, [
      { app: APP, uid: "old", createdAt: at("2024-05-01"), importedAt: at(D(0), 9) },
      { app: APP, uid: "imp4", createdAt: at(D(4), 6), importedAt: at(D(0), 9) },
      { app: APP, uid: "idle", createdAt: at(D(1)), importedAt: at(D(0), 9) },
    ]);
    await records.fold(
      archiveLease({ doc: documentClient(dynamo), tableName: activityTable }, Date.now),
      Date.now,
    );
    await records.addBatch(APP, [{ app: APP, uid: "late", importedAt: at(D(9), 10), existed: true }]);
    // Another app's import of the same uids changes nothing here.
    await records.addBatch("other-app", [
      { app: "other-app", uid: "plain", createdAt: at("2020-01-01"), importedAt: at(D(0)) },
    ]);

    // Act
    const { days, weeks } = await usersOverTime(sets, APP, D(0), D(13), D(13));
    const engine = duckDbEngine({ s3, bucket });
    const bySql = await engine.query(
      readQuery("users-over-time"),
      { app: APP, from: D(0), to: D(13) },
      { sets: { from: addDays(D(0), -30), to: D(13) } },
    );
    const cohortsBySql = await engine.query(
      readQuery("weekly-cohorts"),
      { app: APP, from: D(0), to: D(13) },
      { sets: { from: D(0), to: D(13) } },
    );

    // Assess: new users are those first seen who did not exist before (bg d0, plain d2, late d3: seen
    // before their import day, fresh d4, imp4 d4: created that day); created: idle d1, imp4 and
    // fresh d4, late d9 (its import day); `old` was created before the range.
    const figure = (key: "newUsers" | "createdUsers") => Object.fromEntries(days.map((d) => [d.day, d[key]]));
    const only = (entries: Record<number, number>) =>
      Object.fromEntries(Array.from({ length: 14 }, (_, n) => [D(n), entries[n] ?? 0]));
    expect(figure("newUsers")).toEqual(only({ 0: 1, 2: 1, 3: 1, 4: 2 }));
    expect(figure("createdUsers")).toEqual(only({ 1: 1, 4: 2, 9: 1 }));
    // Retention follows the cohort: imp4 (new on day 4) is back on day 9 (D+5: not a figure), fresh on day 11 (D+7).
    expect(days.find((d) => d.day === D(4))?.retainedD7).toBe(1);
    expect(days.find((d) => d.day === D(2))?.retainedD7).toBe(1); // plain, back on day 9
    // The weekly cohorts: week 1 holds bg, plain, late, fresh and imp4, not old.
    expect(weeks.map((w) => [w.week, w.users])).toEqual([
      [D(0), 5],
      [D(7), 0],
    ]);
    expect(bySql.rows).toEqual(usersOverTimeRows(days));
    expect(cohortsBySql.rows).toEqual(weeklyCohortRows(weeks));
    // The import records as a table: each imported user of the app, by import day.
    const table = await engine.query(
      'SELECT uid, createdat, importedat, existed, "date" FROM imported_users WHERE app = :app ORDER BY uid',
      { app: APP },
      { sets: { from: D(0), to: D(0) } },
    );
    expect(table.rows.map((r) => [r.uid, r.date, r.existed])).toEqual([
      ["idle", D(0), null],
      ["imp4", D(0), null],
      ["late", D(9), "true"],
      ["old", D(0), null],
    ]);
  });
});
