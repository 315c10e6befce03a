/* `import users` and the retention sweep in the writers model (issue #50). */
import { withArchiveLease } from "../../../../shared/adapters/archive-lease";
import { s3ImportRecords } from "../../../../shared/adapters/import-records";
import { sweepExpiredDays } from "../../../../shared/analytics/archive-expiry";
import { isExpired, utcDay } from "../../../../shared/contracts/bucket-layout";
import { USERS_IMPORT } from "../../../../shared/imports/kinds";
import { runImport } from "../../../../shared/imports/run-import";
import { usersLedger } from "../../../../shared/imports/users-ledger";
import { USERS } from "../../../support/writers-model/cast";
import { leaseOf, RETAIN_DAYS, type Wiring } from "../../../support/writers-model/cores";
import type { Model, OpSpec } from "../../../support/writers-model/model";
import { usersOverTimeOf } from "../invariants";

const DAY_MS = 86_400_000;

/** `import users`: the platform confirms every user; then the fold (as the command runs it). */
export async function importUsers(
  m: Model,
  w: Wiring,
  o: Extract<OpSpec, { op: "import" }>,
): Promise<string> {
  const uids = o.uids.filter((uid) => !m.requested.has(`${o.app}/${uid}`));
  if (!uids.length || m.forgottenApps.has(o.app) || m.forgettingApps.has(o.app)) return "nothing to import";
  const createdAt = Math.floor((w.site.clock.now - o.createdDaysAgo * DAY_MS) / 1000);
  const records = s3ImportRecords(w.clients.s3, w.site.bucket);
  const api = {
    requests: 0,
    send: async <T extends { [key: string]: unknown }>(_kind: unknown, entries: readonly T[]) => {
      await w.gate.pause(w.actor, "platform import");
      return entries.map((e) => ({ id: String(e.uid), result: "imported" as const }));
    },
  };
  const summary = await runImport({
    app: o.app,
    kind: USERS_IMPORT,
    entries: uids.map((uid, i) => ({ at: `line ${i + 1}`, value: { uid, name: USERS[uid], createdAt } })),
    api,
    ledger: usersLedger(records),
    batchSize: 2,
    now: () => w.site.clock.now,
  });
  const importedAt = Math.floor(w.site.clock.now / 1000);
  for (const uid of uids) m.imported.push({ app: o.app, uid, createdAt, importedAt });
  if (o.fold) await records.fold(leaseOf(w), () => w.site.clock.now);
  return `${summary.imported} imported${o.fold ? ", folded" : ""}`;
}

/** The retention sweep under the lease; a retained day's users over time must not change (its own check). */
export async function sweep(m: Model, w: Wiring): Promise<string> {
  const now = w.site.clock.now;
  const before = await usersOverTimeOf(w, now);
  const report = await withArchiveLease(
    leaseOf(w),
    "expiry sweep",
    () => w.site.clock.now,
    (renew) => sweepExpiredDays(w.clients.s3, w.site.bucket, RETAIN_DAYS, now, renew),
  );
  noteSweep(m, now);
  const after = await usersOverTimeOf(w, now);
  for (const [key, figures] of before)
    if (after.get(key) !== figures)
      m.violations.push(
        `the retention sweep changed a retained day's users over time: ${key} ${figures} -> ${after.get(key)}`,
      );
  return `swept ${report.swept.length} folder(s)`;
}

/** What the sweep removed by design: the receipt days past the window. */
export function noteSweep(m: Model, now: number): void {
  let day = utcDay(now - RETAIN_DAYS * DAY_MS - DAY_MS);
  while (isExpired(day, RETAIN_DAYS, now)) day = utcDay(Date.parse(`${day}T00:00:00Z`) + DAY_MS);
  if (!m.keptFrom || day > m.keptFrom) m.keptFrom = day;
}
