import { appKey, type ProjectionTableName } from "./keys.ts";
import type { ItemKey } from "./types.ts";

/**
 * The items that are one user's own, by key (#50, #57 item 7): their presence, and their
 * memberships. The erasure deletes them; a delivery that names a user only as a pseudonym (a
 * delivery an erasure redacted: in flight in the projector, or a redacted line a replay sends to a
 * consumer) writes none of the pseudonym's own, so that the tables and every copy folded from the
 * stream end as if the delivery had been projected before the erasure ran. One definition: the
 * projector (shared/projector/core.ts) and the package's fold (`foldDeliveries`) both apply it.
 */

/** The prefix of every pseudonym an erasure gives a user (`forget`: `erased-<16 hex>`). */
export const PSEUDONYM_PREFIX = "erased-";

/**
 * The pseudonym an erasure gives a user, from its random id.
 *
 * @example pseudonymOf("7c1f0e95d2a4b3c1") // "erased-7c1f0e95d2a4b3c1"
 */
export function pseudonymOf(id: string): string {
  return `${PSEUDONYM_PREFIX}${id}`;
}

/**
 * Whether a uid is a pseudonym an erasure gave (`pseudonymOf`). Only asked of a delivery an
 * erasure redacted (`erasure` set): a platform uid that happens to begin with `erased-` in such a
 * delivery is taken for one (its own items are left to the deliveries that name it unredacted).
 *
 * @example isPseudonym("erased-7c1f0e95d2a4b3c1") // true
 */
export function isPseudonym(uid: string): boolean {
  return uid.startsWith(PSEUDONYM_PREFIX);
}

/** Per table, the uid whose own item a key is (none: the table has no user's own items). */
const OWN_UID: Partial<Record<ProjectionTableName, (key: ItemKey, appId: string) => string | undefined>> = {
  presence: (key, appId) =>
    key.pk.startsWith(appKey(appId, "")) ? key.pk.slice(appKey(appId, "").length) : undefined,
  memberships: (key) => key.sk,
};

/**
 * Whether `key` of `table` is the own item of a user `erased` says is erased (by their
 * pseudonym): such an item is not written.
 *
 * @example isOwnItemOfErased("memberships", { pk: "app1#g1", sk: "erased-7f" }, "app1", isPseudonym) // true
 */
export function isOwnItemOfErased(
  table: string,
  key: ItemKey,
  appId: string,
  erased: (uid: string) => boolean,
): boolean {
  const uid = OWN_UID[table as ProjectionTableName]?.(key, appId);
  return uid !== undefined && erased(uid);
}
