import type { KnownEvent } from "../events/schemas";
import type { Version } from "./version";

/** What a projection is given with each event: the event and what the ingest stamped on it. */
export interface ProjectionInput<E extends KnownEvent = KnownEvent> {
  event: E;
  /** SHA-256 of the raw body. */
  eventId: string;
  /** Edge receipt time of the event's first delivery, ms (what the item remembers, else this delivery's). */
  receivedAt: number;
  /** Event time, ms (payload field, or receivedAt). */
  eventTimeMs: number;
  /** Where the event time came from: a payload path, or "receivedAt". */
  timeSource: string;
  /** `versionOf`: event time, lifecycle rank, first receipt, event id. */
  version: Version;
}

/**
 * A projection in the Emmett style: a pure `evolve(state | null, input) -> state` per item, the
 * triggers it handles, and how to find the items an event touches. No I/O, no clock.
 */
export interface Projection<S extends { pk: string }, E extends KnownEvent = KnownEvent> {
  readonly name: string;
  /** Which events it handles. */
  handles(event: KnownEvent): event is E;
  /** The items (partition key, and sort key when the table has one) an event touches. */
  keys(input: ProjectionInput<E>): ItemKey[];
  /** The new state of one item. Must be commutative and idempotent over inputs. */
  evolve(state: S | null, input: ProjectionInput<E>, key: ItemKey): S;
  /**
   * The fields each versioned part writes (`versions.<part>`), for a projection whose parts a
   * receipt-timed fact can hold: the item then keeps each part's runner-up (`fallback`), so that a
   * part released by a platform retry projected before its original falls back to the fact the
   * retry displaced (`projector/core.ts`, `evolveOnce`).
   */
  readonly parts?: Readonly<Record<string, readonly string[]>>;
}

/** The best fact about a part other than the one holding it: its version and the fields it wrote. */
export interface Fallback {
  v: Version;
  f: Record<string, unknown>;
}

/** Per part, its runner-up while it may be needed (`Projection.parts`). */
export type Fallbacks = Partial<Record<string, Fallback>>;

/**
 * Event ids (a 64-bit prefix of the body hash) recently applied to an item, with their first
 * receipt time (ms; items written by older versions may hold a version string). Kept on every
 * item: a platform retry of the same bytes gets a new receipt time, and must rank at its first.
 */
export type SeenEvents = Record<string, number | Version>;

export interface ItemKey {
  pk: string;
  sk?: string;
}
