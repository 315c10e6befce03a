import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { appKey } from "@webhook-backend/stream/projections/keys";
import { appSegment, dayOfKey, isArchiveObjectKey, objectText } from "../contracts/bucket-layout";
import { S3_PREFIX } from "../platform/constants";
import { compacted, getBytes, keysUnder } from "./bucket";
import type { ErasureCounts } from "./erasure-state";
import { planItems, sessionsOfUser, topListDays } from "./find-items";
import {
  addedSince,
  type BucketListing,
  type DayChunk,
  jsonInner,
  learnFromLines,
  listBucket,
  searchArchive,
  searchChunks,
} from "./find-objects";
import { ledgerDaysOf } from "./ledger";
import type { ErasurePlan, ForgetDependencies, ForgetRequest } from "./plan";
import type { Redaction } from "./redact";
import { type ObjectKind, objectKind, rewriteText } from "./rewrite-objects";

/** What rewriting a plan's objects changes, as the run counts it: what a dry run reports. */
export type ObjectCounts = Pick<
  ErasureCounts,
  "objectsRewritten" | "objectsDeleted" | "linesRedacted" | "linesRemoved"
>;

/** What the step "find" found. */
export interface Found {
  plan: ErasurePlan;
  /** The user's names, learnt from their entities: what a re-run searches for too. */
  names: string[];
  /** What the search saw of the bucket: the objects added after it are looked at again (`addedSince`). */
  listing: BucketListing;
  /** Objects searched (listed candidates read, side objects read). */
  searched: number;
  /** With `countObjects`: what rewriting the plan's objects changes. */
  objectCounts?: ObjectCounts;
}

/** One object's rewrite as the search evaluated it, and with how many of the user's names and sessions. */
interface Evaluated {
  changed: number;
  deleted: boolean;
  names: number;
  sessions: number;
}

/** The counts of a set of evaluated objects: lines redacted for a user, removed for an app. */
function countObjects(evaluated: Iterable<Evaluated>, user: boolean): ObjectCounts {
  const counts: ObjectCounts = { objectsRewritten: 0, objectsDeleted: 0, linesRedacted: 0, linesRemoved: 0 };
  for (const e of evaluated) {
    if (e.deleted) counts.objectsDeleted++;
    else counts.objectsRewritten++;
    if (user) counts.linesRedacted += e.changed;
    else counts.linesRemoved += e.changed;
  }
  return counts;
}

/** What rewriting an object's text changes, or undefined when nothing. */
function evaluateText(
  text: string,
  appId: string,
  redaction: Redaction | undefined,
  kind: ObjectKind = "ndjson",
): Evaluated | undefined {
  const rewrite = rewriteText(kind, text, appId, redaction);
  if (rewrite.changed === 0) return undefined;
  return {
    changed: rewrite.changed,
    deleted: rewrite.text === undefined,
    names: redaction?.names.length ?? 0,
    sessions: redaction?.sessions?.length ?? 0,
  };
}

/**
 * What rewriting an object changes, from its current bytes, or undefined when nothing (or it is
 * gone, or not an object the erasure rewrites).
 *
 * @example await evaluate(deps, "app1", "quarantine/app=app1/date=2026-03-01/e1.json", redaction) // { changed: 1, deleted: false, names: 1 }
 */
async function evaluate(
  deps: ForgetDependencies,
  appId: string,
  key: string,
  redaction: Redaction | undefined,
): Promise<Evaluated | undefined> {
  const kind = objectKind(key);
  const bytes = kind && (await getBytes(deps, key));
  if (!kind || !bytes) return undefined;
  return evaluateText(objectText(bytes), appId, redaction, kind);
}

/**
 * Finds everything a whole app's erasure changes: the archive objects holding its lines (SQL),
 * its side objects, recordings, compacted days and ledger passes. Its items are not listed (every
 * item of the app goes: `eraseAppItems`).
 */
async function findApp(deps: ForgetDependencies, appId: string, counting: boolean): Promise<Found> {
  const listing = await listBucket(deps, appId);
  const found = await searchArchive(deps, appId, [], searchChunks(listing, deps.searchChunkBytes));
  const evaluated = new Map<string, Evaluated>();
  for (const key of [...(counting ? found.keys : []), ...listing.side]) {
    const e = await evaluate(deps, appId, key, undefined);
    if (e) evaluated.set(key, e);
  }
  const objects = new Set([...found.keys, ...[...evaluated.keys()]]);
  const plan: ErasurePlan = {
    objects: [...objects].sort(),
    days: [],
    topListDays: [],
    compactDays: await compacted(
      deps,
      found.keys.map((k) => dayOfKey(k) ?? ""),
    ),
    ledgerDays: await ledgerDaysOf(deps, appId),
    items: [],
    groups: [],
    sessions: [],
    recordings: await keysUnder(deps, `${S3_PREFIX.recordings}${appSegment(appId)}/`),
    bytesScanned: found.bytesScanned,
  };
  return {
    plan,
    names: [],
    listing,
    searched: found.keys.length + listing.side.length,
    ...(counting ? { objectCounts: countObjects(evaluated.values(), false) } : {}),
  };
}

/**
 * Finds everything one user's erasure changes (`ErasurePlan`), from the archive and from the
 * tables on their own (an archive past its retention hides nothing the tables and figures hold):
 * - archive objects by SQL: their uid first, then each name their entities carried (a call's
 *   occupants are named, not identified), searched again once new names are learnt;
 * - the app's side objects that name them (quarantine, oversize, day sets, the old layout);
 * - the table items (`planItems`), the recordings of their sessions;
 * - the days to recompute (those of their lines, and the stored days whose top lists name them,
 *   `topListDays`) that have their raw archive; the stored days without it whose top lists name
 *   them are rewritten in place instead (a day of their lines without either: nothing to change).
 */
async function findUser(
  deps: ForgetDependencies,
  appId: string,
  redaction: Redaction,
  { counting, known }: { counting: boolean; known: Known },
): Promise<Found> {
  const listing = await listBucket(deps, appId);
  const learnt = {
    names: new Set(redaction.names),
    groups: new Set<string>(known.groups),
    // The sessions tied to them before any line is read: those of the tables, and an earlier run's.
    sessions: new Set<string>([...known.sessions, ...(await sessionsOfUser(deps, appId, redaction.uid))]),
    days: new Set<string>(),
  };
  const current = (): Redaction => ({
    ...redaction,
    names: [...learnt.names],
    sessions: [...learnt.sessions],
  });
  // The name their presence item holds: a name to search the archive by, before any line is read.
  const { Item: presence } = await deps.doc.send(
    new GetCommand({ TableName: deps.tables.presence, Key: { pk: appKey(appId, redaction.uid) } }),
  );
  if (typeof presence?.name === "string" && presence.name) learnt.names.add(presence.name);
  const evaluated = new Map<string, Evaluated>();
  // Objects read that did not change, with the names and sessions known when they were read.
  const unchanged = new Map<string, Pick<Evaluated, "names" | "sessions">>();
  let bytesScanned = 0;
  let searched = 0;
  let searchedFor = new Set<string>();
  let chunks: DayChunk[] | undefined;
  // The uid first, then any name learnt from the lines found (a call's occupants are named only).
  for (let round = 0; round < 4; round++) {
    const needles = [redaction.uid, ...learnt.names].filter((n) => !searchedFor.has(n));
    if (needles.length === 0) break;
    searchedFor = new Set([...searchedFor, ...needles]);
    chunks ??= searchChunks(listing, deps.searchChunkBytes);
    const found = await searchArchive(deps, appId, needles.map(jsonInner), chunks);
    bytesScanned += found.bytesScanned;
    for (const key of found.keys) {
      if (evaluated.has(key)) continue;
      await deps.checkpoint?.(`read ${key}`);
      const bytes = await getBytes(deps, key);
      if (!bytes) continue;
      searched++;
      const text = objectText(bytes);
      // What its lines teach first (names, the sessions their uid ties), then what changes in it.
      learnFromLines(text, appId, current(), learnt);
      const e = evaluateText(text, appId, current());
      if (e) {
        evaluated.set(key, e);
        unchanged.delete(key);
      } else unchanged.set(key, { names: learnt.names.size, sessions: learnt.sessions.size });
    }
  }
  const final = current();
  // An object read before a session it holds an occupant of was tied to them: read again.
  for (const [key, seen] of unchanged)
    if (seen.names < final.names.length || seen.sessions < (final.sessions?.length ?? 0)) {
      const e = await evaluate(deps, appId, key, final);
      if (e) evaluated.set(key, e);
    }
  for (const key of listing.side) {
    searched++;
    await deps.checkpoint?.(`read ${key}`);
    const e = await evaluate(deps, appId, key, final);
    if (e) evaluated.set(key, e);
  }
  // An object evaluated before a name or session was learnt: evaluated again for the dry run's counts.
  if (counting)
    for (const [key, e] of evaluated)
      if (e.names < final.names.length || e.sessions < (final.sessions?.length ?? 0)) {
        const again = await evaluate(deps, appId, key, final);
        if (again) evaluated.set(key, again);
      }
  const items = await planItems(deps, appId, final, learnt);
  const named = await topListDays(deps, appId, redaction.uid);
  const days = new Set([...learnt.days, ...named]);
  const objects = [...evaluated.keys()].sort();
  const receiptDays = objects.filter((k) => isArchiveObjectKey(k) && k.startsWith(S3_PREFIX.raw));
  const plan: ErasurePlan = {
    objects,
    days: [...days].filter((d) => listing.rawDays.has(d)).sort(),
    // Only the days whose stored top lists name the user: a day of their lines without its raw
    // archive (a late event's day, expired) whose lists do not name them has nothing to rewrite.
    topListDays: named.filter((d) => !listing.rawDays.has(d)),
    compactDays: await compacted(
      deps,
      receiptDays.map((k) => dayOfKey(k) ?? ""),
    ),
    ledgerDays: [],
    items: items.items,
    groups: items.groups,
    sessions: items.sessions,
    recordings: items.recordings,
    bytesScanned,
  };
  return {
    plan,
    names: [...final.names],
    listing,
    searched,
    ...(counting ? { objectCounts: countObjects(evaluated.values(), true) } : {}),
  };
}

/** What an earlier run of the same erasure found (its saved plan): where the tables hold the user besides their own items. */
type Known = Pick<ErasurePlan, "groups" | "sessions">;

/**
 * Finds everything to change (`ErasurePlan`) for one user (`findUser`) or, without a redaction,
 * a whole app (`findApp`); with `countObjects`, also what rewriting its objects changes (a dry run
 * reports the counts the run would); with `known`, the groups and sessions an earlier run of the
 * same erasure found (a re-run after a crash: their lines may be redacted already).
 *
 * @example (await findPlan(deps, { appId: "app1", uid: "u7", requestedBy: "ops" }, redaction)).plan.objects // ["raw/date=…"]
 */
export async function findPlan(
  deps: ForgetDependencies,
  request: ForgetRequest,
  redaction: Redaction | undefined,
  {
    countObjects: counting = false,
    known = { groups: [], sessions: [] },
  }: { countObjects?: boolean; known?: Known } = {},
): Promise<Found> {
  return redaction
    ? findUser(deps, request.appId, redaction, { counting, known })
    : findApp(deps, request.appId, counting);
}

/** What the projector added since the search, that holds the user (or the app). */
export interface Added {
  objects: string[];
  /** The days of their lines that have a raw archive (recomputed), and their compacted receipt days. */
  days: string[];
  compactDays: string[];
}

/**
 * The objects the projector added since the search (`addedSince` its listing: the archive lease
 * does not cover the projector's new objects) that hold the user (or the app), read one by one:
 * what the erasure rewrites too before it reports.
 *
 * @example await findAdded(deps, "app1", redaction, found.listing) // { objects: ["raw/date=2026-03-10/hour=09/b7.ndjson.gz"], days: ["2026-03-10"], compactDays: [] }
 */
export async function findAdded(
  deps: ForgetDependencies,
  appId: string,
  redaction: Redaction | undefined,
  since: BucketListing,
): Promise<Added> {
  const now = await listBucket(deps, appId);
  const learnt = {
    names: new Set<string>(),
    groups: new Set<string>(),
    sessions: new Set<string>(),
    days: new Set<string>(),
  };
  const objects: string[] = [];
  for (const key of addedSince(since, now)) {
    const kind = objectKind(key);
    const bytes = kind && (await getBytes(deps, key));
    if (!kind || !bytes) continue;
    const text = objectText(bytes);
    if (!evaluateText(text, appId, redaction, kind)) continue;
    objects.push(key);
    if (redaction && kind === "ndjson") learnFromLines(text, appId, redaction, learnt);
  }
  const receiptDays = objects.filter((k) => isArchiveObjectKey(k) && k.startsWith(S3_PREFIX.raw));
  return {
    objects,
    days: [...learnt.days].filter((d) => now.rawDays.has(d)).sort(),
    compactDays: await compacted(
      deps,
      receiptDays.map((k) => dayOfKey(k) ?? ""),
    ),
  };
}
