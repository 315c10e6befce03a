import type { VersionedItem } from "./projections/registry.ts";
import type { KnownFacts, ProjectionInput, RunnerUp } from "./projections/types.ts";
import { factIdOf, type Version, versionFactId, versionReceipt, versionTime } from "./projections/version.ts";

/*
 * What a busy item remembers of the facts it keeps in no part (#57): their ids, by receipt, for
 * twice W (`KNOWN_SPAN_MS`, fold.ts). The K runner-ups of a part recognise a platform retry only
 * while its fact is among them; a group that gets hundreds of joins within W pushes a fact out of
 * them in seconds, and its retry, 10 or 30 s later, would be applied as a new fact at its own
 * receipt. A fact named here changes nothing when a copy of it comes again (`evolveOnce`).
 */

/** The receipt buckets of `known`: one key per 10 s of receipt (base 36), its ids concatenated. */
const KNOWN_BUCKET_MS = 10_000;

/** A runner-up's version (a shadow is its version alone). */
const versionOfRunnerUp = (r: RunnerUp): Version => (typeof r === "string" ? r : r.v);

/** 64 digits, 6 bits each: a fact id's 48 bits in 8 characters (`known`). */
const DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";
const ID_DIGITS = 8;

/**
 * A fact id (`factIdOf`: 12 hex characters, the 48 bits a version keeps) in 8 characters, as
 * `known` stores it. A fact id that is not hex (only tests make one) is hashed to the same width.
 *
 * @example compactFactId("3c01ffb07048") // "F07_i718"
 */
export function compactFactId(factId: string): string {
  let out = "";
  for (const half of [factId.slice(0, 6), factId.slice(6, 12)]) {
    const n = /^[0-9a-f]{6}$/.test(half) ? parseInt(half, 16) : hash24(half);
    for (let shift = 18; shift >= 0; shift -= 6) out += DIGITS[(n >> shift) & 63];
  }
  return out;
}

/** 24 bits of FNV-1a over a text that is not hex. */
function hash24(text: string): number {
  let n = 0x811c9dc5;
  for (const c of text) n = Math.imul(n ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return n & 0xffffff;
}

/** Whether an item's `known` ids name the fact (a compact id, `compactFactId`). */
export function recalls(known: KnownFacts | undefined, compact: string): boolean {
  for (const ids of Object.values(known ?? {}))
    for (let i = 0; i < ids.length; i += ID_DIGITS) if (ids.startsWith(compact, i)) return true;
  return false;
}

/**
 * The facts an item keeps in its parts and runner-ups (and, written before #49, its `seen`
 * memory), each with the earliest receipt it names.
 */
export function keptFacts(state: VersionedItem | null): Map<string, number> {
  const kept = new Map<string, number>();
  if (state === null) return kept;
  const add = (id: string, at: number) => kept.set(id, Math.min(at, kept.get(id) ?? at));
  const consider = (v: Version | undefined) => {
    if (v !== undefined) add(versionFactId(v), versionReceipt(v));
  };
  for (const v of Object.values(state.versions)) consider(v);
  for (const list of Object.values(state.fallback ?? {}))
    if (Array.isArray(list)) for (const r of list) consider(versionOfRunnerUp(r));
    else if (list) consider(list.v);
  for (const [key, value] of Object.entries(state.seen ?? {}))
    add(factIdOf(key), typeof value === "string" ? versionTime(value) : value);
  return kept;
}

/**
 * The ids an item remembers after `input` was folded (`state` → `next`): those it remembered, and
 * every fact that left its parts and runner-ups (or, like a join below six later ones, never
 * entered them), while its receipt is within `spanMs` (`KNOWN_SPAN_MS`) of the newest the item knows; by
 * receipt bucket, so that older ones are dropped whole.
 */
export function knownAfter(
  state: VersionedItem | null,
  next: VersionedItem,
  input: ProjectionInput,
  spanMs: number,
): KnownFacts | undefined {
  const before = keptFacts(state);
  const inputId = versionFactId(input.version);
  before.set(inputId, Math.min(input.receivedAt, before.get(inputId) ?? input.receivedAt));
  const after = keptFacts(next);
  let newest = input.receivedAt;
  for (const at of [...before.values(), ...after.values()]) newest = Math.max(newest, at);
  const buckets = Object.keys(state?.known ?? {}).map((b) => parseInt(b, 36));
  for (const b of buckets) newest = Math.max(newest, b * KNOWN_BUCKET_MS);
  const horizon = newest - spanMs;
  const out: KnownFacts = {};
  for (const [bucket, ids] of Object.entries(state?.known ?? {}))
    if ((parseInt(bucket, 36) + 1) * KNOWN_BUCKET_MS > horizon) out[bucket] = ids;
  for (const [id, at] of before) {
    if (after.has(id) || at < horizon) continue;
    const compact = compactFactId(id);
    if (recalls(out, compact)) continue;
    const bucket = Math.floor(at / KNOWN_BUCKET_MS).toString(36);
    out[bucket] = `${out[bucket] ?? ""}${compact}`;
  }
  return Object.keys(out).length ? out : undefined;
}
