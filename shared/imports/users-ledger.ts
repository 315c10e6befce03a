import type { ImportRecords } from "../adapters/import-records";
import type { ImportUser } from "./kinds";
import type { ImportLedger } from "./run-import";

/**
 * The backend's record of imported users as an import's ledger: the uids recorded for the app
 * (skipped by a re-run), and each confirmed batch added as one record object (its `createdAt`,
 * when the file gave one, is what the figures count the user from).
 *
 * @example const ledger = usersLedger(s3ImportRecords(s3, bucket))
 */
export function usersLedger(records: ImportRecords): ImportLedger<ImportUser> {
  return {
    recorded: async (app) => new Set((await records.users(app)).keys()),
    record: async (app, confirmed, importedAt) => {
      await records.addBatch(
        app,
        confirmed.map(({ entry, outcome }) => ({
          app,
          uid: entry.uid,
          ...(entry.createdAt === undefined ? {} : { createdAt: entry.createdAt }),
          importedAt,
          ...(outcome.result === "existed" ? { existed: true } : {}),
        })),
      );
    },
  };
}
