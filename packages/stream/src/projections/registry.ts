import type { KnownEvent } from "../events/schemas.ts";
import { groupsProjection } from "./groups.ts";
import type { ProjectionTableName } from "./keys.ts";
import { membershipsProjection } from "./memberships.ts";
import { presenceProjection } from "./presence.ts";
import { sessionsProjection } from "./sessions.ts";
import type { Fallbacks, KnownFacts, Projection, SeenEvents } from "./types.ts";
import type { Version } from "./version.ts";

/**
 * Each projection table's projection: the pure evolve folded into it, by the projector into the
 * tables (shared/projector/, which binds each to its store) and by a consumer into its copy
 * (`streamCopy`).
 */
export const PROJECTIONS = {
  groups: groupsProjection,
  memberships: membershipsProjection,
  presence: presenceProjection,
  sessions: sessionsProjection,
} as const satisfies Record<ProjectionTableName, Projection<VersionedItem, KnownEvent>>;

/** An item whose parts each keep the version of the fact that wrote them (and, some, their runner-up). */
export type VersionedItem = {
  pk: string;
  seen?: SeenEvents;
  versions: Partial<Record<string, Version>>;
  fallback?: Fallbacks;
  known?: KnownFacts;
};

/** The state of a table's items, as its projection evolves them. */
export type StateOf<N extends ProjectionTableName> =
  (typeof PROJECTIONS)[N] extends Projection<infer S, infer _E> ? S : never;

/** The attribute an item's expiry (DynamoDB TTL) is kept in, when the backend sets one. */
export const EXPIRES_AT = "expiresAt";
