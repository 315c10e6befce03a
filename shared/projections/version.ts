import { createHash } from "node:crypto";

/**
 * A version orders the facts that wrote a part of an item: the event time in ms, then a short
 * hash of the event's dedupe key to break ties deterministically. Fixed width, so versions
 * compare as strings.
 *
 * @example versionOf(1696932915000, "app|group_created|g1") // "001696932915000.5f0c…"
 */
export type Version = string;

export function versionOf(eventTimeMs: number, dedupeKey: string): Version {
  const hash = createHash("sha256").update(dedupeKey).digest("hex").slice(0, 16);
  return `${Math.max(0, Math.trunc(eventTimeMs)).toString().padStart(15, "0")}.${hash}`;
}

/** Whether `candidate` is strictly newer than `current` (absent counts as oldest). */
export function isNewer(current: Version | undefined, candidate: Version): boolean {
  return current === undefined || candidate > current;
}

/** The same version at another time (the tie-breaking hash kept). */
export function versionAt(version: Version, eventTimeMs: number): Version {
  return `${Math.max(0, Math.trunc(eventTimeMs)).toString().padStart(15, "0")}${version.slice(15)}`;
}

/** The event time (ms) a version was made from. */
export function versionTime(version: Version): number {
  return Number(version.slice(0, 15));
}

/** The smaller of two optional numbers. */
export function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** The larger of two optional numbers. */
export function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}
