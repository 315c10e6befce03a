import type { KnownEvent } from "../events/schemas.ts";
import type { Version } from "./version.ts";

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
   * The fields each versioned part writes (`versions.<part>`): the item then keeps, per part, the
   * facts that could still take it back (`fallback`, `projector/fold.ts`), so that a part released
   * by the earlier copy of a fact (a platform retry projected before its original) falls back to
   * the right fact, whatever the order.
   */
  readonly parts?: Readonly<Record<string, readonly string[]>>;
  /**
   * Parts that are one field a payload may omit (`name`, `avatar`, …), each with the part whose
   * facts carry it: a max-lattice of its own (the value of the newest fact that carried it). Its
   * version is stored only where it differs from its owner's (`fold.ts`, `expandFieldParts`).
   */
  readonly fieldParts?: Readonly<Record<string, string>>;
  /**
   * Every fact-derived field of its items is a part's (#57): the item remembers, for twice W by
   * receipt, the ids of the facts it folded and keeps in no part or runner-up (`known`,
   * `fold.ts`), and a copy of one changes nothing: a platform retry in a busy group is recognised
   * however many facts came between.
   */
  readonly recallsFacts?: boolean;
}

/**
 * A fact that may still take its part back (a candidate: its version and, where they differ from
 * the holder's, the fields it wrote, `null` for one it left absent), or only its version (a
 * shadow: remembered so that a later copy of it is recognised, never to win).
 */
export type RunnerUp = Version | { v: Version; f?: Record<string, unknown> };

/** The single runner-up items written before #49 kept: its version and every field it wrote. */
export interface LegacyFallback {
  v: Version;
  f: Record<string, unknown>;
}

/** Per part, its runner-ups, best first (`Projection.parts`). */
export type Fallbacks = Partial<Record<string, RunnerUp[] | LegacyFallback>>;

/**
 * Event ids (a 64-bit prefix of the body hash) with their first receipt time, on items written
 * before #49 (the fold now recognises a fact by the versions its parts keep); read, never written.
 */
export type SeenEvents = Record<string, number | Version>;

/**
 * The facts an item folded and keeps in no part or runner-up (#57), by receipt: per 10 s bucket
 * (its start / 10 s, base 36), their ids (`compactFactId`: 48 bits in 8 characters) concatenated.
 */
export type KnownFacts = Record<string, string>;

export interface ItemKey {
  pk: string;
  sk?: string;
}
