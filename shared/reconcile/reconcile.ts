import { createHash } from "node:crypto";
import { type KnownEvent, parseWebhookEvent } from "@webhook-backend/stream/events/schemas";
import { evolveOnce } from "@webhook-backend/stream/fold";
import { appKey } from "@webhook-backend/stream/projections/keys";
import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import { presenceProjection } from "@webhook-backend/stream/projections/presence";
import type { ProjectionInput } from "@webhook-backend/stream/projections/types";
import { lifecycleRank, versionOf } from "@webhook-backend/stream/projections/version";
import type { ItemStore } from "../ports/item-store";
import type { ListedUser, UserListing } from "./platform-users";

/** What a reconcile changed. */
export interface ReconcileSummary {
  appId: string;
  /** Users in the listing. */
  seen: number;
  setOnline: number;
  setOffline: number;
  unchanged: number;
  /** Listed with a status that is neither online nor offline: left as they are. */
  skipped: number;
  /** Every page was read: users not listed online were set offline. */
  complete: boolean;
  /** Why the listing is incomplete. */
  error?: string;
}

/** The platform's statuses: `available` and `online` are online; `offline` is offline. */
function presenceOf(status: string | undefined): "online" | "offline" | undefined {
  if (status === "online" || status === "available") return "online";
  if (status === "offline") return "offline";
  return undefined;
}

/**
 * A fact observed at `fetchedAt` (ms) as the presence projection takes it: a status change event
 * stamped with the fetch time, so the same versioning rules apply as to every webhook event (a
 * later webhook event still wins; an older one arriving later does not undo it). It is made of the
 * listing alone, never of what the item holds (#57: a fact that read the item would differ with
 * the order in which an older webhook and the reconcile are processed): the listing says nothing of
 * a device, so its platform is `unknown` (no agent, no app version), and nothing of when the status
 * changed, so it moves no `since` (`userPresenceChanged: false`).
 */
function reconcileFact(
  appId: string,
  user: Pick<ListedUser, "uid" | "name" | "avatar" | "role" | "lastActiveAt">,
  status: "online" | "offline",
  fetchedAt: number,
): ProjectionInput {
  const parsed = parseWebhookEvent({
    trigger: "user_connection_status_changed",
    appId,
    region: "reconcile",
    webhook: "reconcile",
    data: {
      timestamp: fetchedAt,
      user: { ...user, uid: user.uid, status },
      status,
      currentConnection: {
        action: "reconciled",
        connectedAt: fetchedAt,
        platform: "unknown",
      },
      userPresenceChanged: false,
    },
  });
  if (parsed.kind !== "known")
    throw new Error(`reconcile fact for ${user.uid} is not an event: ${JSON.stringify(parsed)}`);
  const event: KnownEvent = parsed.event;
  // A fact observed at the fetch time, ordered like any other (a middle-rank fact received then).
  const eventId = createHash("sha256")
    .update(`${appId}|reconcile|${fetchedAt}|${user.uid}|${status}`)
    .digest("hex");
  return {
    event,
    eventId,
    receivedAt: fetchedAt,
    eventTimeMs: fetchedAt,
    timeSource: "reconcile (fetch time)",
    version: versionOf({
      eventTimeMs: fetchedAt,
      rank: lifecycleRank(event.trigger),
      firstReceivedAt: fetchedAt,
      eventId,
    }),
  };
}

/**
 * Brings the presence table in line with the platform's listing, as facts observed at the fetch
 * time: a user listed online becomes online, one listed offline becomes offline, and — only when
 * the listing is complete — a user online here whom it does not show online becomes offline. A
 * partial listing changes nothing it could not confirm. The listing's profile fields (name,
 * avatar, role, lastActiveAt) are kept on the items.
 *
 * @example await reconcilePresence({ appId, listing, fetchedAt: Date.now(), onlineHere, presence })
 */
export async function reconcilePresence(options: {
  appId: string;
  listing: UserListing;
  fetchedAt: number;
  /** The uids this deployment holds online now (the `online` index). */
  onlineHere: readonly string[];
  presence: ItemStore<PresenceState>;
}): Promise<ReconcileSummary> {
  const { appId, listing, fetchedAt } = options;
  const facts = new Map<string, { user: Pick<ListedUser, "uid">; status: "online" | "offline" }>();
  let skipped = 0;
  for (const user of listing.users) {
    const status = presenceOf(user.status);
    if (status) facts.set(user.uid, { user, status });
    else skipped++;
  }
  if (listing.complete)
    for (const uid of options.onlineHere)
      if (facts.get(uid)?.status !== "online")
        facts.set(uid, { user: facts.get(uid)?.user ?? { uid }, status: "offline" });

  const entries = [...facts];
  const outcomes = await options.presence.applyMany(
    entries.map(([uid, { user, status }]) => ({
      key: { pk: appKey(appId, uid) },
      update: (state: PresenceState | null) => {
        const fact = reconcileFact(appId, user, status, fetchedAt);
        if (!presenceProjection.handles(fact.event)) throw new Error("a reconcile fact is a presence event");
        // As the projector applies a fact (#57): the stored versions read as they are (a profile
        // field's version left implicit is the status's), the runner-ups kept, so that a webhook
        // later than the fetch, applied before the reconcile, still wins every field it carried.
        return evolveOnce(presenceProjection, fact as ProjectionInput<typeof fact.event>, {
          pk: appKey(appId, uid),
        })(state);
      },
    })),
  );
  const summary: ReconcileSummary = {
    appId,
    seen: listing.users.length,
    setOnline: 0,
    setOffline: 0,
    unchanged: 0,
    skipped,
    complete: listing.complete,
    ...(listing.error ? { error: listing.error } : {}),
  };
  const failures: unknown[] = [];
  outcomes.forEach((outcome) => {
    if (!outcome.ok) {
      failures.push(outcome.error);
      return;
    }
    const was = outcome.before?.status;
    const is = outcome.after.status;
    if (was === is) summary.unchanged++;
    else if (is === "online") summary.setOnline++;
    else summary.setOffline++;
  });
  if (failures.length)
    throw new AggregateError(failures, `${failures.length} presence item(s) could not be written`);
  return summary;
}
