import { createHash } from "node:crypto";
import { RETRY_SPREAD_MS } from "@webhook-backend/stream/fold";
import fc from "fast-check";
import type { ListedUser } from "../../shared/reconcile/platform-users";
import { fixture, type Loose } from "./fixtures";
import type { Delivery } from "./histories";

/*
 * The traffic a busy app sends besides what the simulator's apps do (#57): hot groups (tens to
 * hundreds of membership facts within 2 W, the platform's retries among them), sessions with
 * several recordings and transcripts (changed bodies, optional ids left out), one session id
 * reported as a call and as a meeting, presence around reconcile runs (webhooks before and after
 * the fetch), and a user's erasure followed by a replay to a subscriber.
 */

/** One reconcile run: after `at` of the processing order's batches, a listing fetched at `fetchedAt`. */
export interface ReconcileRun {
  at: number;
  fetchedAt: number;
  users: ListedUser[];
  complete: boolean;
}

/** A busy app's history: its deliveries in receipt order, reconcile runs, and perhaps an erasure. */
export interface BusyHistory {
  appId: string;
  deliveries: Delivery[];
  reconciles: ReconcileRun[];
  /** The user erased once everything is processed, then a replay to the subscriber. */
  erase?: string;
}

export const T0 = 1_763_000_000_000;

export function delivery(appId: string, body: Loose, receivedAt: number): Delivery {
  const text = JSON.stringify({ ...body, appId });
  return { body: text, receivedAt, eventId: createHash("sha256").update(text).digest("hex") };
}

export const retryOf = (d: Delivery, after: number): Delivery => ({ ...d, receivedAt: d.receivedAt + after });

const MEMBERSHIP_TRIGGERS = [
  "group_member_joined",
  "group_member_added",
  "group_member_left",
  "group_member_kicked",
  "group_member_scope_changed",
] as const;

/** A membership event of `uid` in `guid` with the group's details (no `updatedAt`: receipt-timed), reporting `count`. */
export function membershipBody(
  trigger: string,
  guid: string,
  uid: string,
  count: number,
  omitName = false,
): Loose {
  const e = fixture(trigger);
  const [first] = Object.values(e.data.members as Record<string, Loose>);
  e.data.members = { [uid]: { ...first, uid, name: `name of ${uid}`, scope: "moderator" } };
  if (omitName) delete e.data.members[uid].name;
  if (trigger !== "group_member_scope_changed") delete e.data.members[uid].scope;
  e.data.group = {
    ...fixture("group_member_joined").data.group,
    guid,
    membersCount: count,
    onlineMembersCount: count % 3,
  };
  delete e.data.group.updatedAt;
  return e;
}

/** A presence event of `uid` at `ms`, with or without an avatar and `lastActiveAt`. */
export function presenceBody(
  uid: string,
  ms: number,
  status: "online" | "offline",
  avatar?: string,
  lastActiveAt?: number,
): Loose {
  const e = fixture("user_connection_status_changed");
  e.data.timestamp = ms;
  e.data.status = status;
  e.data.user = { ...e.data.user, uid, name: `name of ${uid}`, status };
  if (avatar === undefined) delete e.data.user.avatar;
  else e.data.user.avatar = avatar;
  if (lastActiveAt === undefined) delete e.data.user.lastActiveAt;
  else e.data.user.lastActiveAt = lastActiveAt;
  e.data.currentConnection.action = status === "online" ? "connected" : "disconnected";
  return e;
}

/** A session event of `sessionId` from its template, `edit`ed. */
export function sessionBody(
  trigger: string,
  sessionId: string,
  edit: (data: Loose, e: Loose) => void = () => {},
): Loose {
  const e = fixture(trigger);
  if (e.data.call) e.data.call.data.entities.on.entity.sessionid = sessionId;
  else e.data.sessionId = sessionId;
  edit(e.data, e);
  return e;
}

const hotGroupDraw = fc.record({
  facts: fc.array(
    fc.record({
      trigger: fc.nat({ max: 4 }),
      user: fc.nat({ max: 24 }),
      gapMs: fc.integer({ min: 1, max: 800 }),
      omitName: fc.boolean(),
    }),
    { minLength: 8, maxLength: 200 },
  ),
  retries: fc.array(
    fc.record({ of: fc.nat(), after: fc.constantFrom(10_000, 30_000, 12_000, 44_000, RETRY_SPREAD_MS) }),
    { maxLength: 8 },
  ),
});

const sessionDraw = fc.record({
  meetingToo: fc.boolean(),
  participants: fc.integer({ min: 1, max: 4 }),
  recordings: fc.array(
    fc.record({ start: fc.nat({ max: 2 }), duration: fc.nat({ max: 3 }), file: fc.nat({ max: 2 }) }),
    { maxLength: 4 },
  ),
  transcripts: fc.array(
    fc.record({
      tid: fc.option(fc.nat({ max: 2 })),
      start: fc.option(fc.nat({ max: 2 })),
      url: fc.nat({ max: 2 }),
      end: fc.nat({ max: 2 }),
    }),
    { maxLength: 4 },
  ),
  ended: fc.boolean(),
});

const presenceDraw = fc.record({
  events: fc.array(
    fc.record({
      user: fc.nat({ max: 3 }),
      status: fc.boolean(),
      avatar: fc.option(fc.nat({ max: 2 })),
      lastActive: fc.boolean(),
      gapMs: fc.integer({ min: 1, max: 20_000 }),
    }),
    { maxLength: 12 },
  ),
  reconciles: fc.array(
    fc.record({
      at: fc.nat(),
      fetchedAt: fc.nat(),
      // A listing names each user once.
      users: fc.uniqueArray(
        fc.record({
          user: fc.nat({ max: 3 }),
          status: fc.constantFrom("online", "offline", "available", "busy"),
          avatar: fc.nat({ max: 2 }),
        }),
        { maxLength: 4, selector: (u) => u.user },
      ),
      complete: fc.boolean(),
    }),
    { maxLength: 2 },
  ),
});

/** What a busy app's history is drawn from (`busyHistory` builds it). */
export const busyDraw = fc.record({
  hot: fc.option(hotGroupDraw, { freq: 2 }),
  sessions: fc.array(sessionDraw, { maxLength: 3 }),
  presence: presenceDraw,
  erase: fc.option(fc.nat({ max: 3 })),
});
export type BusyDraw = typeof busyDraw extends fc.Arbitrary<infer T> ? T : never;

/** The history a draw describes, for `appId`: receipts strictly increasing, from `T0`. */
export function busyHistory(appId: string, draw: BusyDraw): BusyHistory {
  const out: Delivery[] = [];
  let clock = T0;
  const at = (gap: number) => (clock += Math.max(1, gap));
  const uid = (n: number) => `busy-u${n}`;
  if (draw.hot) {
    const firsts: Delivery[] = [];
    draw.hot.facts.forEach((f, i) => {
      const trigger = MEMBERSHIP_TRIGGERS[f.trigger] as string;
      const r = at(f.gapMs);
      firsts.push(delivery(appId, membershipBody(trigger, "hot-g", uid(f.user), i + 2, f.omitName), r));
    });
    out.push(...firsts);
    for (const { of, after } of draw.hot.retries)
      out.push(retryOf(firsts[of % firsts.length] as Delivery, after));
  }
  draw.sessions.forEach((s, n) => {
    const id = `v1.us.${appId}.busy${n}`;
    const start = Math.floor(at(2000) / 1000);
    const names = Array.from({ length: s.participants }, (_, k) => `Person ${k}`);
    const occupant = (k: number, left?: number) => ({
      joined_at: start + k,
      audio_call: k % 2 ? "false" : "true",
      name: names[k],
      ...(left ? { left_at: left } : {}),
    });
    const kind = n % 2 ? "meeting" : "call";
    out.push(
      delivery(
        appId,
        sessionBody(`${kind}_started`, id, (d) => (d.created_at = start)),
        at(300),
      ),
    );
    if (s.meetingToo)
      out.push(
        delivery(
          appId,
          sessionBody(
            `${kind === "call" ? "meeting" : "call"}_started`,
            id,
            (d) => (d.created_at = start + 1),
          ),
          at(300),
        ),
      );
    for (const k of names.keys())
      out.push(
        delivery(
          appId,
          sessionBody(`${kind}_participant_joined`, id, (d) => {
            d.occupant = occupant(k);
          }),
          at(500),
        ),
      );
    for (const r of s.recordings)
      out.push(
        delivery(
          appId,
          sessionBody("recording_generated", id, (d) => {
            d.startTime = String(start + r.start);
            d.duration = `${21 + r.duration}.5`;
            d.recording_url = `https://rec.example/${id}/${r.file}.mp4?sig=${r.duration}`;
          }),
          at(700),
        ),
      );
    for (const t of s.transcripts)
      out.push(
        delivery(
          appId,
          sessionBody("transcription_generated", id, (d) => {
            if (t.tid === null) delete d.tid;
            else d.tid = `tr-${t.tid}`;
            if (t.start === null) delete d.startTime;
            else d.startTime = start + t.start;
            d.endTime = start + 30 + t.end;
            d.transcript_url = `https://files.example/${id}/${t.url}.txt?sig=1`;
          }),
          at(700),
        ),
      );
    if (s.ended)
      out.push(
        delivery(
          appId,
          sessionBody(`${kind}_ended`, id, (d) => {
            d.created_at = start;
            d.destroyed_at = start + 40;
            d.all_occupants = names.map((_, k) => occupant(k, start + 40));
          }),
          at(900),
        ),
      );
  });
  const presenceStart = clock;
  for (const p of draw.presence.events) {
    const ms = at(p.gapMs);
    const avatar = p.avatar === null ? undefined : `https://a.example/${uid(p.user)}/${p.avatar}.png`;
    const body = presenceBody(
      uid(p.user),
      ms - 300,
      p.status ? "online" : "offline",
      avatar,
      p.lastActive ? Math.floor(ms / 1000) : undefined,
    );
    out.push(delivery(appId, body, ms));
  }
  const span = Math.max(1, clock - presenceStart);
  const reconciles: ReconcileRun[] = draw.presence.reconciles.map((r) => ({
    at: r.at,
    fetchedAt: presenceStart + (r.fetchedAt % span),
    complete: r.complete,
    users: r.users.map((u) => ({
      uid: uid(u.user),
      name: `listed ${uid(u.user)}`,
      status: u.status,
      avatar: `https://listed.example/${uid(u.user)}/${u.avatar}.png`,
      lastActiveAt: Math.floor((presenceStart + (r.fetchedAt % span)) / 1000),
    })),
  }));
  return {
    appId,
    deliveries: out.sort((a, b) => a.receivedAt - b.receivedAt),
    reconciles,
    ...(draw.erase === null ? {} : { erase: uid(draw.erase) }),
  };
}
