import { RETRY_SPREAD_MS, RUNNER_UPS_KEPT } from "@webhook-backend/stream/fold";
import fc from "fast-check";
import { type BusyHistory, busyDraw, busyHistory } from "../busy-traffic";
import { type Delivery, platformDraw, processedAnyhow, simulatedHistory } from "../histories";

/** The app of the reference property's histories. */
export const REFERENCE_APP = "busy-app";
const APP = REFERENCE_APP;

/** A busy app's history and the simulator's, merged, perhaps with one copy received beyond W. */
export const referenceHistories = fc
  .record({
    busy: busyDraw,
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    events: fc.integer({ min: 0, max: 24 }),
    platform: platformDraw(RETRY_SPREAD_MS),
    late: fc.option(
      fc.record({ of: fc.nat(), after: fc.integer({ min: RETRY_SPREAD_MS + 1, max: 600_000 }) }),
      {
        freq: 4,
      },
    ),
  })
  .map(({ busy, seed, events, platform, late }): BusyHistory => {
    const own = busyHistory(APP, busy);
    const simulated = events >= 5 ? simulatedHistory(APP, seed, events, platform).deliveries : [];
    const all = [...own.deliveries, ...simulated];
    const original = late ? all[late.of % Math.max(1, all.length)] : undefined;
    if (late && original) all.push({ ...original, receivedAt: original.receivedAt + late.after });
    return { ...own, deliveries: all.sort((a, b) => a.receivedAt - b.receivedAt) };
  })
  .chain((history) =>
    processedAnyhow({
      appId: APP,
      generated: { events: [], expected: new Map() },
      deliveries: history.deliveries,
    }).map(({ shuffled }) => ({ history, order: shuffled })),
  )
  // Within the documented bound (docs/design-and-limits.md, "One state from one set of facts"):
  // beyond it the documents allow a part an older fact, which the reference does not model.
  .filter(({ order }) => aheadOfOriginals(order) <= RUNNER_UPS_KEPT);

/** The items a delivery's fact may fold into, over-approximated: its group, its members, its user; else the app. */
function subjects(delivery: Delivery): string[] {
  const data = (JSON.parse(delivery.body) as { data?: Record<string, unknown> }).data ?? {};
  const group = (data.group as { guid?: string } | undefined)?.guid;
  const user = (data.user as { uid?: string } | undefined)?.uid;
  const members = Object.keys((data.members as object | undefined) ?? {});
  const out = [
    ...(group ? [`g ${group}`] : []),
    ...(user ? [`u ${user}`] : []),
    ...members.map((m) => `u ${m}`),
  ];
  return out.length > 0 ? out : ["app"];
}

/**
 * The K bound's count (docs/design-and-limits.md: "more than K facts of one part within 2 W of each
 * other, each with a later copy folded before its earliest ... may leave the part on an older fact"):
 * the most facts of one item, their earliest receipts within 2 W, a later copy of each processed
 * before its earliest copy (counted per item, not per part, and whatever the batches: never fewer).
 */
export function aheadOfOriginals(order: readonly Delivery[]): number {
  const earliest = new Map<string, Delivery>();
  for (const d of order)
    if ((earliest.get(d.eventId)?.receivedAt ?? Number.POSITIVE_INFINITY) > d.receivedAt)
      earliest.set(d.eventId, d);
  const processed = new Set<string>();
  const ahead = new Map<string, number[]>();
  for (const d of order) {
    const first = earliest.get(d.eventId) as Delivery;
    if (!processed.has(d.eventId) && d.receivedAt > first.receivedAt)
      for (const key of subjects(first)) ahead.set(key, [...(ahead.get(key) ?? []), first.receivedAt]);
    processed.add(d.eventId);
  }
  let most = 0;
  for (const receipts of ahead.values()) {
    const sorted = receipts.sort((a, b) => a - b);
    for (let i = 0, j = 0; j < sorted.length; j++) {
      while ((sorted[j] as number) - (sorted[i] as number) > 2 * RETRY_SPREAD_MS) i++;
      most = Math.max(most, j - i + 1);
    }
  }
  return most;
}

/** Batch sizes, cycled: how the projector's queue and the subscriber's cut the processing order. */
export const batchSizes = fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 5 });
