/**
 * `npx webhook import users FILE --app A [--stack NAME] [--dry-run] [--json]`: posts the users of a
 * JSON or NDJSON file to the app's data import path, in batches, resumable after a crash, and
 * records what the platform confirmed where the backend keeps its own truth, so that the figures
 * know the imported users (`shared/imports`; docs/operating.md, "Importing").
 */
import { readFile } from "node:fs/promises";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { Command } from "commander";
import { ArchiveLockedError } from "../../shared/adapters/archive-lease";
import { type ImportRecords, s3ImportRecords } from "../../shared/adapters/import-records";
import { IMPORT_BATCH_SIZE, IMPORT_REQUESTS_PER_MINUTE, importApi } from "../../shared/imports/import-api";
import { parseImportFile } from "../../shared/imports/import-file";
import {
  IMPORT_API_KEYS_ENV,
  type ImportKeySource,
  importSettingsFor,
} from "../../shared/imports/import-keys";
import { IMPORT_KINDS, type ImportKindName } from "../../shared/imports/kinds";
import { runImport } from "../../shared/imports/run-import";
import { usersLedger } from "../../shared/imports/users-ledger";
import { DEFAULT_GRACE_MINUTES } from "../analytics/activity-view/options";
import { archiveLeaseFor } from "../analytics/engines";
import { importCountsLines, importFailureNotes, importReportLines } from "../cli/import-output";
import { decimal, integer, oneOf, runProgram, UsageError, UserFacingError, withTarget } from "../cli/program";
import { resolveTarget, type Target } from "../target";

interface ImportCliOptions {
  app: string;
  /** When a day closes: its end plus this (the rollup's grace period), for the report's "created users". */
  graceMinutes: number;
  dryRun?: boolean;
  json?: boolean;
  batchSize: number;
  perMinute: number;
  stack?: string;
  stateDir?: string;
}

/** Where the app's import settings are: the stack's import secret, or `IMPORT_API_KEYS` locally. */
function keySource(target: Target, stack: string | undefined): ImportKeySource {
  if (target.kind === "local") return { kind: "env", value: process.env[IMPORT_API_KEYS_ENV] };
  if (!target.importApiKeysSecretArn)
    throw new UserFacingError(`stack ${stack} has no ImportApiKeysSecret output: deploy this version first`);
  return { kind: "secret", secretId: target.importApiKeysSecretArn };
}

/** Folds this run's batch records into their days' objects; the lease held by another rewrite only defers it. */
async function fold(records: ImportRecords, target: Target): Promise<string | undefined> {
  if (!target.activityTable)
    return "the target has no activity table (the archive lease): the batch records stay unfolded";
  try {
    // A command's lease: held (by the schedule's pass, for seconds), it waits for it.
    await records.fold(archiveLeaseFor(target), Date.now);
    return undefined;
  } catch (error) {
    if (error instanceof ArchiveLockedError)
      return `${error.message}: the batch records stay as they are (read as well as folded); the next import folds them`;
    throw error;
  }
}

async function run(kindName: ImportKindName, file: string, o: ImportCliOptions): Promise<void> {
  const kind = IMPORT_KINDS[kindName];
  if (!kind.ready) throw new UsageError(`import ${kindName}: ${kind.waitsFor}`);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UserFacingError(
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  const secrets = new SecretsManagerClient({});
  try {
    if (!target.bucket) throw new UserFacingError("the target has no data bucket");
    const entries = parseImportFile(text, kindName);
    const settings = await importSettingsFor(o.app, keySource(target, o.stack), () => secrets);
    const records = s3ImportRecords(target.s3, target.bucket);
    const progress = process.stderr.isTTY && !o.json;
    const summary = await runImport({
      app: o.app,
      kind,
      entries,
      api: o.dryRun
        ? undefined
        : importApi({ url: settings.url, apiKey: settings.apiKey, perMinute: o.perMinute }),
      ledger: usersLedger(records),
      batchSize: o.batchSize,
      now: Date.now,
      onProgress: progress
        ? (answered, total) => process.stderr.write(`\r\x1b[Kimporting: ${answered}/${total}`)
        : undefined,
    });
    if (progress && summary.batches) process.stderr.write("\n");
    const warning = o.dryRun ? undefined : await fold(records, target);
    if (o.json) console.log(JSON.stringify({ ...summary, ...(warning ? { warning } : {}) }));
    else {
      for (const line of importReportLines(summary, file)) console.log(line);
      for (const line of importCountsLines(summary, {
        now: Date.now(),
        graceMinutes: o.graceMinutes,
        targetArgs: o.stack ? ` --stack ${o.stack}` : "",
      }))
        console.log(line);
      if (summary.error) console.error(`stopped: ${summary.error}`);
      for (const line of importFailureNotes(summary)) console.error(line);
      if (warning) console.error(`warning: ${warning}`);
    }
    // Anything not imported (invalid, refused, or left unsent) makes the run a failure for a script.
    if (summary.invalid.length + summary.refused.length + summary.unsent > 0) process.exitCode = 1;
  } finally {
    secrets.destroy();
    target.destroy();
  }
}

const program = withTarget(
  new Command("import")
    .description(
      "Import users into an app through the platform's data import API, and record them in the backend's copy (groups, members and messages wait for the spec's paths)",
    )
    .argument(
      "<kind>",
      "what the file holds: users (groups, members, messages: not shown in the spec yet)",
      oneOf(...(Object.keys(IMPORT_KINDS) as ImportKindName[])),
    )
    .argument(
      "<file>",
      'a JSON (a list, or {"users": {<uid>: {…}}}) or NDJSON file of {"uid","name"[,"createdAt"]}',
    )
    .requiredOption(
      "--app <appId>",
      "the app to import into (its import address and key: IMPORT_API_KEYS, or the stack's import secret)",
    )
    .option("--dry-run", "check the file and say what would be sent: nothing is sent or recorded")
    .option(
      "--grace-minutes <minutes>",
      "when a day closes: its end plus this (the rollup's grace period; the report says when the users count)",
      integer(0, 1440),
      DEFAULT_GRACE_MINUTES,
    )
    .option(
      "--batch-size <n>",
      "entities a request (the platform's limit is not in the spec; its docs say 50)",
      integer(1, 1000),
      IMPORT_BATCH_SIZE,
    )
    .option(
      "--per-minute <n>",
      "requests a minute at most (the platform's rate limit is not in the spec; its docs say 60)",
      decimal(0, 100_000, { exclusiveMin: true }),
      IMPORT_REQUESTS_PER_MINUTE,
    )
    .option("--json", "one JSON object on stdout: the counts and every refusal"),
).action((kind: ImportKindName, file: string, o: ImportCliOptions) => run(kind, file, o));

const code = await runProgram(program, process.argv.slice(2));
if (code !== 0) process.exitCode = code;
