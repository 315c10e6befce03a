import { createHash } from "node:crypto";
import { type KnownEvent, parseWebhookEvent } from "@webhook-backend/stream/events/schemas";
import { evolveOnce } from "@webhook-backend/stream/fold";
import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import { appKey } from "@webhook-backend/stream/projections/keys";
import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import { presenceProjection } from "@webhook-backend/stream/projections/presence";
import type { ProjectionInput } from "@webhook-backend/stream/projections/types";
import { lifecycleRank, versionOf } from "@webhook-backend/stream/projections/version";
import type { ItemStore } from "../ports/item-store";
import type { ReconcileFactRecord, ReconcileFactSink } from "./fact-sink";
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
  /** The facts that changed an item, published on the stream (`facts`: #57 item 4), and those kept unpublished. */
  published?: number;
  unpublished?: number;
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
): ProjectionInput & { body: string } {
  const raw = {
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
  };
  const parsed = parseWebhookEvent(raw);
  if (parsed.kind !== "known")
    throw new Error(`reconcile fact for ${user.uid} is not an event: ${JSON.stringify(parsed)}`);
  const event: KnownEvent = parsed.event;
  // A fact observed at the fetch time, ordered like any other (a middle-rank fact received then).
  const eventId = createHash("sha256")
    .update(`${appId}|reconcile|${fetchedAt}|${user.uid}|${status}`)
    .digest("hex");
  return {
    // The body the stream carries and the archive keeps (`fact-sink.ts`, filled by `shared/stream/reconcile-facts.ts`): the event as reconcile made it.
    body: JSON.stringify(raw),
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
 * Whether applying a fact changed an item in anything but its memory of seen event ids: its
 * fields, or its runner-ups (a fact that became one can take a part back later, so a copy
 * needs it too). A fact that changed nothing is neither archived nor published.
 */
function factChanged(before: PresenceState | null, after: PresenceState): boolean {
  if (before === null) return true;
  const { seen: _b, ...was } = before as PresenceState & { seen?: unknown };
  const { seen: _a, ...is } = after as PresenceState & { seen?: unknown };
  return canonicalJson(was) !== canonicalJson(is);
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
  /** Where the facts that changed an item go: the archive and the stream (`fact-sink.ts`, filled by `shared/stream/reconcile-facts.ts`). @default none */
  facts?: ReconcileFactSink;
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
  /** The fact each item's last update applied (an update runs again on a conflict). */
  const applied = new Map<string, ProjectionInput & { body: string }>();
  const outcomes = await options.presence.applyMany(
    entries.map(([uid, { user, status }]) => ({
      key: { pk: appKey(appId, uid) },
      update: (state: PresenceState | null) => {
        const fact = reconcileFact(appId, user, status, fetchedAt);
        applied.set(uid, fact);
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
  const changed: ReconcileFactRecord[] = [];
  outcomes.forEach((outcome, i) => {
    if (!outcome.ok) {
      failures.push(outcome.error);
      return;
    }
    const fact = applied.get(entries[i]?.[0] ?? "");
    if (fact && factChanged(outcome.before, outcome.after))
      changed.push({
        appId,
        eventId: fact.eventId,
        receivedAt: fetchedAt,
        trigger: fact.event.trigger,
        body: fact.body,
      });
    const was = outcome.before?.status;
    const is = outcome.after.status;
    if (was === is) summary.unchanged++;
    else if (is === "online") summary.setOnline++;
    else summary.setOffline++;
  });
  if (options.facts) Object.assign(summary, await options.facts.record(appId, changed));
  if (failures.length)
    throw new AggregateError(failures, `${failures.length} presence item(s) could not be written`);
  return summary;
}
