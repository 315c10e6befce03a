import { createHash } from "node:crypto";
import { importedUsersOf } from "../../../shared/adapters/import-records";
import { daysInRange } from "../../../shared/analytics/rollup";
import { daySetDays, s3UserSets, usersOverTime } from "../../../shared/analytics/user-sets";
import { isExpired, utcDay } from "../../../shared/contracts/bucket-layout";
import { isImportBatchKey } from "../../../shared/contracts/import-records";
import {
  credentialAllowsApp,
  matchCredential,
  parseCredentialList,
} from "../../../shared/ingest/credentials";
import { namesUid, USERS } from "../../support/writers-model/cast";
import { RETAIN_DAYS, type Wiring } from "../../support/writers-model/cores";
import type { Erasure, Model } from "../../support/writers-model/model";
import { readSnapshot, type Snapshot, type StoredObject } from "../../support/writers-model/snapshot";
import { APPS, type AppId, type Site, webhookPair } from "../../support/writers-model/world";
import { sideViolations } from "./side-invariants";
import { streamViolations } from "./stream-invariants";

/*
 * The writers model's invariants (issue #50), checked after every step, while nothing runs:
 * - erasure: no erased uid in anything rewritable of its app (archive objects in every layout,
 *   quarantine, oversize, day sets, import records and their keys, the tables and the figures'
 *   runner-ups); no presence or membership of its pseudonym (a redacted line applied again); every
 *   line that named the user keeps its erasure mark; every line that names no user asked to be
 *   erased is as the platform sent it (a namesake, a uid that another prefixes);
 * - every acknowledged delivery is in the raw archive unless its app was erased or its day expired;
 * - every app is accepted with the credential its webhook holds, and a retired one is gone;
 * - what an operation checked of itself (a rotation's probe, the sweep's retained days).
 * The figures are checked when a run settles (`figures.ts`).
 */

type Json = Record<string, unknown>;

const parse = (line: string): Json | undefined => {
  try {
    const value: unknown = JSON.parse(line);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
};

/** The app a stored line or item belongs to: its `appId` or `app`, its key's `app=` segment, its pk's prefix. */
function appOf(value: Json | undefined, key = ""): string | undefined {
  if (typeof value?.appId === "string") return value.appId;
  if (typeof value?.app === "string") return value.app;
  const segment = /app=([^/]+)/.exec(key)?.[1];
  if (segment) return segment;
  const pk = typeof value?.pk === "string" ? value.pk : "";
  return APPS.find((app) => pk.startsWith(`${app}#`));
}

/** Whether an erasure still binds: its app not erased whole since (nothing of it is left to check). */
const binding = (m: Model, e: Erasure) =>
  e.complete && !m.forgottenApps.has(e.app) && !m.forgettingApps.has(e.app);

/** The violations of the model's invariants in the stored state; none: the empty list. */
export async function violations(m: Model, site: Site): Promise<string[]> {
  const snapshot = await readSnapshot(site);
  return [
    ...m.violations,
    ...erasureViolations(m, snapshot),
    ...deliveryViolations(m, snapshot),
    ...compactionViolations(snapshot),
    ...credentialViolations(m, site),
    ...(await streamViolations(m, site)),
    ...sideViolations(m, snapshot),
  ];
}

function erasureViolations(m: Model, { objects, items }: Snapshot): string[] {
  const found: string[] = [];
  const erasures = m.erasures.filter((e) => binding(m, e));
  // The import records (their lines and batch keys) owe nothing to the queues: checked for every
  // erasure that ended, complete or not (one that left a queued message unreached still rewrote them).
  const ended = m.erasures.filter((e) => !m.forgottenApps.has(e.app) && !m.forgettingApps.has(e.app));
  for (const object of objects) {
    for (const e of ended.filter((x) => !x.complete && object.key.startsWith("imports/"))) {
      for (const line of object.lines)
        if (parse(line)?.app === e.app && namesUid(line, e.uid))
          found.push(
            `${object.key}: a line of ${e.app} names ${e.uid} (erased as ${e.pseudonym}): ${line.slice(0, 160)}`,
          );
      found.push(...importKeyViolations(object, e));
    }
    for (const e of erasures) {
      if (namesUid(object.key, e.uid) && object.key.includes(e.app))
        found.push(`key ${object.key} names ${e.uid}`);
      for (const line of object.lines) {
        const value = parse(line);
        const app = appOf(value, object.key) ?? (line.includes(e.app) ? e.app : undefined);
        if (app === e.app && namesUid(line, e.uid))
          found.push(
            `${object.key}: a line of ${e.app} names ${e.uid} (erased as ${e.pseudonym}): ${line.slice(0, 160)}`,
          );
      }
      found.push(...importKeyViolations(object, e));
    }
    found.push(...lineViolations(m, object));
  }
  for (const [table, list] of Object.entries(items))
    for (const item of list) {
      const text = JSON.stringify(item);
      for (const e of erasures) {
        if (appOf(item) !== e.app) continue;
        if (namesUid(text, e.uid))
          found.push(`${table} item of ${e.app} names ${e.uid}: ${text.slice(0, 160)}`);
        // Nor one a delivery in flight brought back (redacted, it writes no own item of the pseudonym).
        if ((table === "memberships" || table === "presence") && item.uid === e.pseudonym)
          found.push(`${table} item of ${e.pseudonym} (${e.uid}'s pseudonym) is back: ${text.slice(0, 160)}`);
      }
    }
  return found;
}

/**
 * An import batch's key made from its app and uids (sha256 of both, the scheme of main): with the
 * pseudonym put back as the erased uid, does the key match? Then the key reverses the erasure.
 */
function importKeyViolations(object: StoredObject, e: Erasure): string[] {
  if (!isImportBatchKey(object.key)) return [];
  const uids = object.lines.flatMap((l) => {
    const value = parse(l);
    return value && value.app === e.app && typeof value.uid === "string" ? [value.uid] : [];
  });
  if (!uids.includes(e.pseudonym)) return [];
  const guessed = uids.map((u) => (u === e.pseudonym ? e.uid : u)).sort();
  const digest = createHash("sha256")
    .update(JSON.stringify([e.app, ...guessed]))
    .digest("hex")
    .slice(0, 32);
  return object.key.includes(digest)
    ? [`import key ${object.key} gives ${e.uid} back (sha256 of the app and the uids)`]
    : [];
}

/**
 * Each archive line (raw, edge) of a delivery the model knows: one that named a user asked to be
 * erased carries its erasure mark once the erasure ended; one that named none is its body as sent.
 */
function lineViolations(m: Model, object: StoredObject): string[] {
  if (!object.key.startsWith("raw/") && !object.key.startsWith("edge/")) return [];
  const found: string[] = [];
  const byId = new Map(m.delivered.map((d) => [d.eventId, d]));
  for (const line of object.lines) {
    const value = parse(line);
    const delivered = typeof value?.eventId === "string" ? byId.get(value.eventId) : undefined;
    if (!value || !delivered) continue;
    const erased = delivered.uids.filter((uid) => m.requested.has(`${delivered.app}/${uid}`));
    if (erased.length === 0) {
      if (value.body !== delivered.body)
        found.push(
          `${object.key}: ${delivered.trigger} ${delivered.eventId.slice(0, 8)} names no erased user (${delivered.uids.join(", ")}) and was rewritten: ${firstChange(delivered.body, String(value.body))}`,
        );
      continue;
    }
    const ended = m.erasures.some((e) => binding(m, e) && e.app === delivered.app && erased.includes(e.uid));
    if (ended && typeof value.erasure !== "string")
      found.push(
        `${object.key}: ${delivered.trigger} ${delivered.eventId.slice(0, 8)} named ${erased.join(", ")} and has lost its erasure mark`,
      );
    // The erased user's name, on a line tied to them, is gone too (unless a namesake on it keeps it).
    // Only a user whose own erasure ended (another's on the line may have ended while theirs runs).
    const endedFor = erased.filter((uid) =>
      m.erasures.some((e) => binding(m, e) && e.app === delivered.app && e.uid === uid),
    );
    for (const uid of endedFor) {
      const namesake = delivered.uids.some((u) => u !== uid && USERS[u] === USERS[uid]);
      if (!namesake && String(value.body).includes(`"${USERS[uid]}"`))
        found.push(
          `${object.key}: ${delivered.trigger} ${delivered.eventId.slice(0, 8)} still gives ${uid}'s name`,
        );
    }
  }
  return found;
}

/** Where a rewritten text first differs from the original: `…before… -> …after…`. */
function firstChange(before: string, after: string): string {
  let i = 0;
  while (i < before.length && before[i] === after[i]) i++;
  const from = Math.max(0, i - 40);
  return `…${before.slice(from, i + 60)}… -> …${after.slice(from, i + 60)}…`;
}

function deliveryViolations(m: Model, { objects }: Snapshot): string[] {
  const archived = new Set<string>();
  for (const object of objects.filter((o) => o.key.startsWith("raw/")))
    for (const line of object.lines) {
      const id = parse(line)?.eventId;
      if (typeof id === "string") archived.add(id);
    }
  return m.delivered
    .filter(
      (d) =>
        !d.pending &&
        !m.forgottenApps.has(d.app) &&
        !m.forgettingApps.has(d.app) &&
        !(m.keptFrom && utcDay(d.receivedAt) < m.keptFrom) &&
        !archived.has(d.eventId),
    )
    .map((d) => `acknowledged ${d.trigger} of ${d.app} ${d.eventId.slice(0, 8)} is not in the raw archive`);
}

/** Every Parquet file in a compacted day's folders is one its manifest adopted (readers take the folder). */
function compactionViolations({ objects }: Snapshot): string[] {
  const found: string[] = [];
  for (const manifest of objects.filter((o) => /^compact\/date=[^/]+\/manifest\.json$/.test(o.key))) {
    const listed = parse(manifest.lines.join(""))?.parquet;
    const adopted = new Set(
      Array.isArray(listed) ? listed.filter((k): k is string => typeof k === "string") : [],
    );
    const folders = new Set([...adopted].map((k) => k.slice(0, k.lastIndexOf("/") + 1)));
    for (const o of objects)
      if (
        o.key.endsWith(".parquet") &&
        folders.has(o.key.slice(0, o.key.lastIndexOf("/") + 1)) &&
        !adopted.has(o.key)
      )
        found.push(`${o.key}: a Parquet file no compaction adopted, in a folder readers take`);
  }
  return found;
}

function credentialViolations(m: Model, site: Site): string[] {
  const stored = parseCredentialList(JSON.parse(site.secret.value));
  const found: string[] = [];
  for (const app of APPS) {
    const pair = webhookPair(site, app);
    const credential = matchCredential(pair, stored);
    if (!credential || !credentialAllowsApp(credential, app))
      found.push(
        `${app}'s webhook delivers with ${pair.username}, which the ingest refuses (the store holds ${stored.map((c) => c.username).join(", ")})`,
      );
  }
  for (const retired of m.retired)
    if (stored.some((c) => c.username === retired.username))
      found.push(`${retired.username} was reported retired and is still accepted`);
  return found;
}

/**
 * Each app's users over time on the retained days (`day`: DAU, new users), as the console reads
 * them: what the retention sweep must leave as it is.
 */
export async function usersOverTimeOf(w: Wiring, now: number): Promise<Map<string, string>> {
  const sets = s3UserSets(w.clients.s3, w.site.bucket);
  const closed = await daySetDays(sets);
  const last = closed.at(-1);
  const out = new Map<string, string>();
  if (!last) return out;
  const kept = daysInRange(utcDay(now - (RETAIN_DAYS + 2) * 86_400_000), last).filter(
    (day) => !isExpired(day, RETAIN_DAYS, now),
  );
  if (!kept.length) return out;
  for (const app of APPS) {
    const imported = await importedUsersOf(sets, app);
    const { days } = await usersOverTime(sets, app, kept[0] as string, last, last, imported);
    for (const d of days) out.set(`${app} ${d.day}`, JSON.stringify({ dau: d.dau, newUsers: d.newUsers }));
  }
  return out;
}

export type { AppId };
