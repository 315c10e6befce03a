import { appSegment, dayOfKey, isArchiveObjectKey, objectText } from "../contracts/bucket-layout";
import { S3_PREFIX } from "../platform/constants";
import { appKey } from "../platform/tables";
import { compacted, getBytes, keysUnder } from "./bucket";
import { getItem, planItems } from "./find-items";
import { type DayChunk, jsonInner, learnFromLines, searchArchive, searchChunks } from "./find-objects";
import type { ErasurePlan, ForgetDependencies, ForgetRequest } from "./plan";
import { type Redaction, redactNdjson } from "./redact";
import { objectKind, rewriteText } from "./rewrite-objects";

/**
 * Finds everything to change (`ErasurePlan`): archive objects by SQL (the user's uid and names,
 * again once new names are learnt from their entities), the app's quarantine and oversize
 * objects that name them, the table items, the recordings, the days to recompute.
 *
 * @example (await findPlan(deps, { appId: "app1", uid: "u7", requestedBy: "ops" }, redaction)).plan.objects // ["raw/date=…"]
 */
export async function findPlan(
  deps: ForgetDependencies,
  request: ForgetRequest,
  redaction: Redaction | undefined,
): Promise<{ plan: ErasurePlan; names: string[]; searched: number }> {
  const { appId } = request;
  const seg = appSegment(appId);
  // Besides the archive: the app's quarantine and oversize bodies, and every day's user sets
  // (small: a line per active user).
  const side = [
    ...(await keysUnder(deps, `${S3_PREFIX.quarantine}app=${seg}/`)),
    ...(await keysUnder(deps, `${S3_PREFIX.oversize}${seg}/`)),
    ...(await keysUnder(deps, S3_PREFIX.users)),
  ];
  /** The side objects the erasure changes (read each: they are the app's own, or small). */
  const changing = async (subject: Redaction | undefined) => {
    const out: string[] = [];
    for (const key of side) {
      const kind = objectKind(key);
      const bytes = kind && (await getBytes(deps, key));
      if (kind && bytes && rewriteText(kind, objectText(bytes), appId, subject).changed > 0) out.push(key);
    }
    return out;
  };
  if (!redaction) {
    const found = await searchArchive(deps, appId, [], await searchChunks(deps, deps.searchChunkBytes));
    const days = new Set(found.keys.map((k) => dayOfKey(k) ?? ""));
    const plan: ErasurePlan = {
      objects: [...found.keys, ...(await changing(undefined))],
      days: [],
      compactDays: await compacted(deps, [...days]),
      items: [],
      groups: [],
      sessions: [],
      recordings: await keysUnder(deps, `${S3_PREFIX.recordings}${seg}/`),
      bytesScanned: found.bytesScanned,
    };
    return { plan, names: [], searched: found.keys.length + side.length };
  }
  const learnt = {
    names: new Set(redaction.names),
    groups: new Set<string>(),
    sessions: new Set<string>(),
    days: new Set<string>(),
  };
  // The name their presence item holds: a name to search the archive by, before any line is read.
  const presence = await getItem(deps, "presence", { pk: appKey(appId, redaction.uid) });
  if (typeof presence?.name === "string" && presence.name) learnt.names.add(presence.name);
  const objects = new Set<string>();
  let bytesScanned = 0;
  let searchedFor = new Set<string>();
  let chunks: DayChunk[] | undefined;
  // The uid first, then any name learnt from the lines found (a call's occupants are named only).
  for (let round = 0; round < 4; round++) {
    const needles = [redaction.uid, ...learnt.names].filter((n) => !searchedFor.has(n));
    if (needles.length === 0) break;
    searchedFor = new Set([...searchedFor, ...needles]);
    chunks ??= await searchChunks(deps, deps.searchChunkBytes);
    const found = await searchArchive(deps, appId, needles.map(jsonInner), chunks);
    bytesScanned += found.bytesScanned;
    for (const key of found.keys) {
      if (objects.has(key)) continue;
      const bytes = await getBytes(deps, key);
      if (!bytes) continue;
      const current = { ...redaction, names: [...learnt.names] };
      const text = objectText(bytes);
      if (redactNdjson(text, appId, current).redacted === 0) {
        // A line that only looked like the user (a substring of another id): learn its names anyway.
        learnFromLines(text, appId, current, learnt);
        continue;
      }
      objects.add(key);
      learnFromLines(text, appId, current, learnt);
    }
  }
  const final = { ...redaction, names: [...learnt.names] };
  for (const key of await changing(final)) objects.add(key);
  const items = await planItems(deps, appId, final, learnt);
  const receiptDays = [...objects]
    .filter(isArchiveObjectKey)
    .flatMap((k) => (k.startsWith(S3_PREFIX.raw) ? [dayOfKey(k) ?? ""] : []));
  const plan: ErasurePlan = {
    objects: [...objects].sort(),
    days: [...learnt.days].sort(),
    compactDays: await compacted(deps, receiptDays),
    items: items.items,
    groups: [...learnt.groups].sort(),
    sessions: [...learnt.sessions].sort(),
    recordings: items.recordings,
    bytesScanned,
  };
  return { plan, names: [...learnt.names], searched: objects.size + side.length };
}
