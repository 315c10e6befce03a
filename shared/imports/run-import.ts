import { ENGLISH } from "@webhook-backend/stream/parse";
import { ImportUnavailableError } from "../platform/errors";
import type { EntityOutcome, ImportApi } from "./import-api";
import { type FileEntry, NOT_JSON } from "./import-file";
import type { ReadyImportKind } from "./kinds";

/** An entry not imported, named by its id (when it has one) and its place in the file, with why. */
export interface Refusal {
  id?: string;
  at: string;
  reason: string;
}

/**
 * What the backend knows of an import: the ids it recorded as confirmed (a re-run skips them),
 * and where it records a batch the platform confirmed (before the next batch is sent).
 */
export interface ImportLedger<T> {
  recorded(app: string): Promise<ReadonlySet<string>>;
  record(
    app: string,
    confirmed: ReadonlyArray<{ entry: T; outcome: EntityOutcome }>,
    importedAt: number,
  ): Promise<void>;
}

export interface ImportRunOptions<T extends { [key: string]: unknown }> {
  app: string;
  kind: ReadyImportKind<T>;
  entries: readonly FileEntry[];
  /** The platform; absent: a dry run (nothing sent, nothing recorded). */
  api?: ImportApi;
  ledger: ImportLedger<T>;
  batchSize: number;
  now: () => number;
  /** After each batch: the entities answered so far, and how many are to send. */
  onProgress?: (answered: number, total: number) => void;
}

export interface ImportSummary {
  app: string;
  kind: string;
  dryRun: boolean;
  /** Entries in the file. */
  read: number;
  /** Entries the file gets wrong (not JSON, not an entry of the kind): never sent. */
  invalid: Refusal[];
  /** Entries repeating an id the file gave before (the first is sent). */
  duplicates: number;
  /** Entries the backend recorded as confirmed by an earlier run: skipped. */
  alreadyImported: number;
  /** Entries to send this run (sent, on a dry run would be). */
  toSend: number;
  /** Confirmed by the platform: created, or (`existed`) it had them already. */
  imported: number;
  existed: number;
  /** Refused by the platform, each with its reason. */
  refused: Refusal[];
  /** Entries left unsent because the run stopped (the platform unavailable): a re-run sends them. */
  unsent: number;
  batches: number;
  requests: number;
  /** Why the run stopped before the end (`unsent` > 0). */
  error?: string;
  /**
   * For a kind the figures read (users): the entries confirmed this run by the UTC day the
   * figures count them as created on (`createdAt`, else the import day), and how many of them had
   * no `createdAt` (counted on the import day). What the report says of when they count.
   */
  countedOn?: { days: Record<string, number>; withoutCreatedAt: number };
}

/**
 * Imports a file's entries of one kind into an app: checks each against the kind's schema (a bad
 * entry is refused here, with its place in the file), skips what the backend recorded as confirmed
 * (a re-run after a crash sends only the rest) and ids the file repeats, then sends the rest in
 * batches, recording each batch's confirmed entries before the next is sent. The platform
 * unavailable through every retry stops the run (the summary says what is unsent: a re-run sends
 * it); a refused API key or a wrong address throws.
 *
 * @example const summary = await runImport({ app: "app1", kind: USERS_IMPORT, entries, api, ledger, batchSize: 50, now: Date.now })
 */
export async function runImport<T extends { [key: string]: unknown }>(
  options: ImportRunOptions<T>,
): Promise<ImportSummary> {
  const { app, kind, api, ledger } = options;
  const summary: ImportSummary = {
    app,
    kind: kind.name,
    dryRun: api === undefined,
    read: options.entries.length,
    invalid: [],
    duplicates: 0,
    alreadyImported: 0,
    toSend: 0,
    imported: 0,
    existed: 0,
    refused: [],
    unsent: 0,
    batches: 0,
    requests: 0,
  };
  const recorded = await ledger.recorded(app);
  const seen = new Set<string>();
  const pending: Array<{ entry: T; at: string }> = [];
  for (const { at, value } of options.entries) {
    const parsed = kind.entry.safeParse(value === NOT_JSON ? undefined : value, ENGLISH);
    if (!parsed.success) {
      const id = idOf(value);
      summary.invalid.push({
        ...(id ? { id } : {}),
        at,
        reason:
          value === NOT_JSON
            ? "not JSON"
            : parsed.error.issues.map((i) => `${i.path.join(".") || "(entry)"}: ${i.message}`).join("; "),
      });
      continue;
    }
    const id = kind.id(parsed.data);
    if (seen.has(id)) summary.duplicates++;
    else if (recorded.has(id)) summary.alreadyImported++;
    else pending.push({ entry: parsed.data, at });
    seen.add(id);
  }
  summary.toSend = pending.length;
  if (!api) return summary;

  const startRequests = api.requests;
  let answered = 0;
  for (let i = 0; i < pending.length; i += options.batchSize) {
    const batch = pending.slice(i, i + options.batchSize);
    let outcomes: EntityOutcome[];
    try {
      outcomes = await api.send(
        kind,
        batch.map((b) => b.entry),
      );
    } catch (error) {
      if (!(error instanceof ImportUnavailableError)) throw error;
      summary.unsent = pending.length - i;
      summary.error = error.message;
      break;
    }
    const byId = new Map(batch.map((b) => [kind.id(b.entry), b] as const));
    const confirmed: Array<{ entry: T; outcome: EntityOutcome }> = [];
    for (const outcome of outcomes) {
      const sent = byId.get(outcome.id);
      if (!sent) continue;
      if (outcome.result === "refused")
        summary.refused.push({ id: outcome.id, at: sent.at, reason: outcome.reason });
      else {
        confirmed.push({ entry: sent.entry, outcome });
        if (outcome.result === "existed") summary.existed++;
        else summary.imported++;
      }
    }
    // Recorded before the next batch is sent: a crash after this line loses nothing confirmed.
    const importedAt = Math.floor(options.now() / 1000);
    if (confirmed.length) await ledger.record(app, confirmed, importedAt);
    if (kind.countsFrom)
      countOn(
        summary,
        confirmed.map((c) => kind.countsFrom?.(c.entry)),
        importedAt,
      );
    summary.batches++;
    answered += batch.length;
    options.onProgress?.(answered, pending.length);
  }
  summary.requests = api.requests - startRequests;
  return summary;
}

/** Adds confirmed entries to `countedOn`: each on the UTC day of its `countsFrom`, else of its import. */
function countOn(summary: ImportSummary, from: ReadonlyArray<number | undefined>, importedAt: number): void {
  summary.countedOn ??= { days: {}, withoutCreatedAt: 0 };
  const counted = summary.countedOn;
  for (const at of from) {
    const day = new Date((at ?? importedAt) * 1000).toISOString().slice(0, 10);
    counted.days[day] = (counted.days[day] ?? 0) + 1;
    if (at === undefined) counted.withoutCreatedAt++;
  }
}

/** The id an invalid entry still has, to name it (`uid`, `guid`, `muid` or `id`). */
function idOf(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  for (const field of ["uid", "guid", "muid", "id"]) {
    const id = (value as Record<string, unknown>)[field];
    if (typeof id === "string" && id) return id;
  }
  return undefined;
}
