import type { ProjectionTableName } from "@webhook-backend/stream/projections/keys";
import type { MembershipState } from "@webhook-backend/stream/projections/memberships";
import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import { EXPIRES_AT, type VersionedItem } from "@webhook-backend/stream/projections/registry";
import type { SessionState } from "@webhook-backend/stream/projections/sessions";

/**
 * Item expiry (DynamoDB TTL, #34): how long an item that nothing will change any more stays, per
 * table, in days (absent: kept). The deployment allows only windows longer than the raw archive's
 * (`expire*Days` in infra/config.ts), so that an item expires after the archive that could bring its
 * events back by a replay, never a tombstone a replay still needs.
 */
export type ItemExpiryDays = Partial<Record<ProjectionTableName, number>>;

const DAY_SECONDS = 86_400;

/**
 * When an item closed (ms), if it did: a session that ended (or never started: busy, cancelled,
 * rejected, unanswered), a member who left or was kicked (not banned: a ban is a state the app
 * relies on, kept as long as the table is), a user gone offline. An open item never expires.
 */
const CLOSED_AT: Partial<Record<ProjectionTableName, (item: VersionedItem) => number | undefined>> = {
  sessions: (item) => {
    const s = item as unknown as SessionState;
    if (s.outcome === undefined || s.outcome === "initiated") return undefined;
    return s.endedAt ?? s.startedAt ?? s.initiatedAt ?? s.firstEventAt;
  },
  memberships: (item) => {
    const m = item as unknown as MembershipState;
    return m.status === "left" || m.status === "kicked" ? m.statusAt : undefined;
  },
  presence: (item) => {
    const p = item as unknown as PresenceState;
    return p.status === "offline" ? p.lastSeen : undefined;
  },
};

/**
 * The item with its `expiresAt` (epoch seconds: closed + the table's window) if the table has a
 * window and the item is closed; without it otherwise (an item opened again stays). Derived from
 * the state alone, so a replay computes the same.
 *
 * @example withExpiry("presence", offlineUser, { presence: 400 }).expiresAt // lastSeen/1000 + 400 days
 */
export function withExpiry<S extends VersionedItem>(
  table: ProjectionTableName,
  item: S,
  days: ItemExpiryDays,
): S {
  const window = days[table];
  const closedAt = window === undefined ? undefined : CLOSED_AT[table]?.(item);
  const { [EXPIRES_AT]: _previous, ...rest } = item as S & { [EXPIRES_AT]?: number };
  if (window === undefined || closedAt === undefined) return rest as S;
  return { ...rest, [EXPIRES_AT]: Math.floor(closedAt / 1000) + window * DAY_SECONDS } as unknown as S;
}
