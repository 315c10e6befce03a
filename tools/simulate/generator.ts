import { lifecycleRank } from "@webhook-backend/stream/projections/version";
import { ACTIONS, WEIGHTS } from "./actions";
import { Random } from "./random";
import { type AppState, type GeneratedEvent, type GeneratorOptions, HistoryWorld } from "./world";

/**
 * Plays the platform: a coherent, seeded history of webhook events for one or more apps, built
 * from the test fixtures, and the state the tables must end in.
 * The world (state, clock, payload builders) is `world.ts`, what can happen `actions.ts`; this
 * drives them, and plans the deliveries (duplicates, reorders).
 */

export type { GeneratedEvent, GeneratorOptions } from "./world";

export interface ExpectedApp {
  /** Every user of the app, as the platform lists them (`GET /v3/users`). */
  users: Array<{ uid: string; name: string }>;
  groups: Map<string, { name: string; owner: string; deleted: boolean; members: Map<string, string> }>;
  online: Set<string>;
  sessions: Map<
    string,
    { kind: "call" | "meet"; ended: boolean; outcome?: string; stints: number; recordings: number }
  >;
}

export interface GeneratedHistory {
  events: GeneratedEvent[];
  expected: Map<string, ExpectedApp>;
}

/**
 * Zipf-like weights for `n` apps: the k-th app acts 1/k as often as the first.
 *
 * @example zipfWeights(3) // [1, 0.5, 0.333…]
 */
export function zipfWeights(n: number): number[] {
  return Array.from({ length: n }, (_, k) => 1 / (k + 1));
}

/**
 * Generates a history. Deterministic for a seed and a start (`startAt`, default 2025-11-13); the
 * start moves only the times, not the state the history implies.
 *
 * @example generateHistory({ events: 1000, seed: 7, apps: ["app1"] }).events.length // 1000 (or a few more)
 */
export function generateHistory(options: GeneratorOptions): GeneratedHistory {
  const world = new HistoryWorld(options);
  seedGroups(world, options);
  play(world, options);
  return { events: world.events, expected: expectedState(world.apps) };
}

/**
 * Some groups to start with, so that every kind of event has something to act on. Weighted, an
 * app starts with no group (its actions that need one wait until it creates one), so that a
 * thousand apps' histories keep the mix of one app's rather than three group creations per app.
 */
function seedGroups(world: HistoryWorld, options: GeneratorOptions): void {
  if (options.appWeights) return;
  for (const app of world.apps) for (let i = 0; i < 3; i++) ACTIONS.groupCreate(world, app);
}

/** Draws an app (by weight) and an action until the history has `options.events` events. */
function play(world: HistoryWorld, options: GeneratorOptions): void {
  const weights = options.appWeights;
  const byWeight = weights && Object.fromEntries(world.apps.map((_a, i) => [String(i), weights[i] ?? 0]));
  const { random } = world;
  while (world.events.length < options.events) {
    const app = byWeight
      ? (world.apps[Number(random.weighted(byWeight))] as AppState)
      : random.pick(world.apps);
    world.t += random.int(0, 2) * (options.pace ?? 1);
    ACTIONS[random.weighted(WEIGHTS)](world, app);
  }
}

/** The state the tables must end in, per app: what the world holds at the end. */
function expectedState(apps: readonly AppState[]): Map<string, ExpectedApp> {
  const expected = new Map<string, ExpectedApp>();
  for (const app of apps) {
    const sessions = new Map<
      string,
      { kind: "call" | "meet"; ended: boolean; outcome?: string; stints: number; recordings: number }
    >();
    for (const [id, s] of app.ended) sessions.set(id, { ...s, ended: true });
    for (const [id, s] of app.sessions)
      sessions.set(id, { kind: s.kind, ended: false, stints: s.stints, recordings: 0 });
    expected.set(app.appId, {
      users: app.users,
      groups: new Map(
        [...app.groups].map(([guid, g]) => [
          guid,
          { name: g.name, owner: g.owner, deleted: g.deleted, members: g.members },
        ]),
      ),
      online: app.online,
      sessions,
    });
  }
  return expected;
}

/** Triggers without an event time: nothing in their payload could restore an order, so they keep theirs. */
const UNORDERED = /^(group_member_|user_blocked|user_unblocked)/;

export interface DeliveryPlanOptions {
  seed: number;
  /** Share of events delivered twice (the copy later, as a platform retry would be). */
  duplicateShare: number;
  /** Share of events swapped with a neighbour within a window of 8. */
  reorderShare: number;
}

/**
 * Whether two events must be received in the order they were sent: two without an event time
 * (nothing in their payloads could restore their order), or two about one item at the same
 * instant and the same lifecycle rank (their first receipts break the tie). A terminal step may
 * arrive before the opening step of its second: the rank puts them back in order.
 */
function receiptOrdered(a: GeneratedEvent, b: GeneratedEvent): boolean {
  if (UNORDERED.test(a.trigger) && UNORDERED.test(b.trigger)) return true;
  return (
    a.item !== undefined &&
    a.item === b.item &&
    a.at === b.at &&
    lifecycleRank(a.trigger) === lifecycleRank(b.trigger)
  );
}

/**
 * The order deliveries go out in: duplicates re-sent 20 to 60 deliveries later, and some
 * neighbours swapped. Events that must be received in the order they were sent
 * (`receiptOrdered`) never overtake each other.
 */
export function deliveryPlan(
  events: readonly GeneratedEvent[],
  options: DeliveryPlanOptions,
): GeneratedEvent[] {
  const random = new Random(options.seed ^ 0x5eed);
  const order = [...events];
  for (let i = 0; i < order.length; i++) {
    if (!random.chance(options.reorderShare)) continue;
    const j = Math.min(order.length - 1, i + random.int(1, 8));
    const [a, b] = [order[i] as GeneratedEvent, order[j] as GeneratedEvent];
    // Swapping moves a past everything up to b, and b back past everything from a.
    const crossed = order.slice(i + 1, j);
    if (receiptOrdered(a, b) || crossed.some((e) => receiptOrdered(a, e) || receiptOrdered(e, b))) continue;
    order[i] = b;
    order[j] = a;
  }
  // Facts of one instant whose lifecycle orders them (created and deleted in one second, a call
  // initiated and rejected) often arrive the other way round: half of them swap in transit.
  for (let i = 1; i < order.length && options.reorderShare > 0; i++) {
    const [a, b] = [order[i - 1] as GeneratedEvent, order[i] as GeneratedEvent];
    if (a.item === undefined || a.item !== b.item || a.at !== b.at || !random.chance(0.5)) continue;
    if (lifecycleRank(a.trigger) === lifecycleRank(b.trigger)) continue;
    order[i - 1] = b;
    order[i] = a;
  }
  const plan: GeneratedEvent[] = [];
  const pending: Array<{ at: number; event: GeneratedEvent }> = [];
  order.forEach((event, index) => {
    plan.push(event);
    if (random.chance(options.duplicateShare)) pending.push({ at: index + random.int(20, 60), event });
    for (const due of pending.filter((p) => p.at === index)) plan.push(due.event);
  });
  for (const late of pending.filter((p) => p.at >= order.length)) plan.push(late.event);
  return plan;
}
