import {
  dayOfKey,
  isArchiveObjectKey,
  isGzip,
  objectText,
  type RawArchiveLine,
} from "../contracts/bucket-layout";
import {
  importBatchKey,
  importsPrefix,
  isImportBatchKey,
  newImportBatchId,
} from "../contracts/import-records";
import { S3_PREFIX } from "../platform/constants";
import { deleteObject, getBytes, putText } from "./bucket";
import type { ErasureCounts } from "./erasure-state";
import type { ForgetDependencies } from "./plan";
import { type Redaction, redactArchiveLine, redactBody, redactNdjson, replaceUid } from "./redact";

/*
 * The erasure's step "rewrite objects": each object that holds the user (or the app) rewritten
 * with one PUT, their lines redacted (or the app's removed) and every other line byte for byte,
 * then its old versions deleted.
 */

export type ObjectKind = "ndjson" | "quarantine" | "oversize" | "users";

/** An archive object of the layout before the batch one (`raw/app=<app>/date=<day>/…`): NDJSON lines like the rest. */
const OLD_LAYOUT = /^(raw|edge)\/app=[^/]+\/date=\d{4}-\d{2}-\d{2}\/[^/]+\.ndjson(\.gz)?$/;

/**
 * The kind of object a key is, as the erasure rewrites it.
 *
 * @example objectKind("quarantine/app=app1/date=2026-03-01/e1.json") // "quarantine"
 */
export function objectKind(key: string): ObjectKind | undefined {
  // Reconcile's facts (#57) are archive lines too: the user's redacted, the app's removed.
  if (isArchiveObjectKey(key) || OLD_LAYOUT.test(key) || key.startsWith(S3_PREFIX.reconcile)) return "ndjson";
  if (key.startsWith(S3_PREFIX.quarantine)) return "quarantine";
  if (key.startsWith(S3_PREFIX.oversize)) return "oversize";
  // The import records (#43) are lines `{"app","uid",…}` as the day sets are: rewritten alike.
  if (key.startsWith(S3_PREFIX.users) || key.startsWith(S3_PREFIX.imports)) return "users";
  return undefined;
}

/** The fields of a day set's lines that are identifiers (analytics/user-sets/): the user's uid in them becomes the pseudonym. */
const SET_IDENTIFIERS = new Set(["uid", "conversation", "group"]);

/**
 * A day set's lines (users, first sightings, conversations started, the membership history:
 * analytics/user-sets/) with the user's uid as the pseudonym wherever it is an identifier, as
 * the archive's redaction writes it (each user once: every count over the sets stays exact, and a
 * day recomputed from the redacted archive gives the same sets), or without the app's lines.
 */
function rewriteUserSet(text: string, appId: string, redaction: Redaction | undefined): Rewrite {
  let changed = 0;
  const lines = text
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.app !== appId) return [line];
      if (!redaction) {
        changed++;
        return [];
      }
      const next = JSON.stringify(
        Object.fromEntries(
          Object.entries(entry).map(([k, v]) => [
            k,
            SET_IDENTIFIERS.has(k) && typeof v === "string" ? replaceUid(v, redaction) : v,
          ]),
        ),
      );
      if (next === JSON.stringify(entry)) return [line];
      changed++;
      return [next];
    });
  return { text: lines.length ? `${lines.join("\n")}\n` : redaction ? "" : undefined, changed };
}

/** What erasing does to one object's text: the new text (undefined: delete it) and the lines changed. */
export interface Rewrite {
  text: string | undefined;
  changed: number;
}

/**
 * How the erasure rewrites an object's text: the user's lines redacted, or the app's lines removed.
 *
 * @example rewriteText("ndjson", text, "app1", redaction) // { text: "…erased-7f…", changed: 2 }
 */
export function rewriteText(
  kind: ObjectKind,
  text: string,
  appId: string,
  redaction: Redaction | undefined,
): Rewrite {
  if (kind === "users") return rewriteUserSet(text, appId, redaction);
  if (!redaction) {
    // The whole app: its lines go; an object left with none goes too.
    if (kind !== "ndjson") return { text: undefined, changed: 1 };
    const lines = text.split("\n").filter((l) => l.trim());
    const kept = lines.filter((l) => (JSON.parse(l) as RawArchiveLine).appId !== appId);
    return {
      text: kept.length ? `${kept.join("\n")}\n` : undefined,
      changed: lines.length - kept.length,
    };
  }
  if (kind === "ndjson") {
    const { text: next, redacted } = redactNdjson(text, appId, redaction);
    return { text: next, changed: redacted };
  }
  if (kind === "quarantine") {
    const next = redactArchiveLine(text, appId, redaction);
    return next === undefined ? { text, changed: 0 } : { text: next, changed: 1 };
  }
  const next = redactBody(text, redaction);
  return { text: next, changed: next === text ? 0 : 1 };
}

/**
 * Rewrites (or deletes) each object, then deletes its old versions: the plan's objects, and those
 * the projector added since the search that hold the user (or the app).
 *
 * @example await rewriteObjects(deps, "app1", plan.objects, redaction, counts) // counts.objectsRewritten: 12
 */
export async function rewriteObjects(
  deps: ForgetDependencies,
  appId: string,
  keys: readonly string[],
  redaction: Redaction | undefined,
  counts: ErasureCounts,
): Promise<void> {
  for (const key of keys) {
    const kind = objectKind(key);
    const bytes = kind && (await getBytes(deps, key));
    if (kind && bytes) {
      const rewrite = rewriteText(kind, objectText(bytes), appId, redaction);
      if (rewrite.changed > 0) {
        await deps.checkpoint?.(`rewrite ${key}`);
        const day = dayOfKey(key);
        if (rewrite.text === undefined) {
          counts.versionsDeleted += await deleteObject(deps, key);
          counts.objectsDeleted++;
        } else if (redaction && key.startsWith(importsPrefix("users")) && isImportBatchKey(key) && day) {
          // An import batch's key may be of the form before #50, the digest of its app and uids:
          // with the pseudonym inside, trying candidate uids against the key would recover the
          // user. Its lines move to a random key (a re-run after a crash between the two moves
          // it again: a reader keeps each uid once).
          await putText(
            deps,
            importBatchKey("users", day, (deps.newImportBatchId ?? newImportBatchId)()),
            rewrite.text,
            isGzip(bytes),
          );
          counts.versionsDeleted += await deleteObject(deps, key);
          counts.objectsRewritten++;
        } else {
          await putText(deps, key, rewrite.text, isGzip(bytes));
          counts.objectsRewritten++;
        }
        if (redaction) counts.linesRedacted += rewrite.changed;
        else counts.linesRemoved += rewrite.changed;
      }
    }
    await deps.checkpoint?.(`purge ${key}`);
    counts.versionsDeleted += await deps.versions.purge(key, { exact: true });
  }
}
