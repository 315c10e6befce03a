import {
  type BusyHistory,
  delivery,
  membershipBody,
  presenceBody,
  retryOf,
  sessionBody,
  T0,
} from "./busy-traffic";
import type { Loose } from "./fixtures";
import type { Delivery } from "./histories";

/** A named case of the reference property: a history, the order its deliveries are processed in, the batch sizes. */
export interface NamedCase {
  name: string;
  history: BusyHistory;
  order: Delivery[];
  sizes: number[];
}

/**
 * The seven histories of issue #57, each one the documents say cannot give what it gave on
 * fbefa6a: checked against the reference as named cases and as examples of the drawn property.
 */
export function sevenHistories(appId: string): NamedCase[] {
  const d = (body: Loose, at: number) => delivery(appId, body, at);
  const receiptOrder = (
    history: BusyHistory,
    sizes = [1],
  ): Pick<NamedCase, "history" | "order" | "sizes"> => ({
    history,
    order: history.deliveries,
    sizes,
  });

  // 1: eight joins 1 s apart (counts 2…9), the first retried 10 s later, after the other seven.
  const joins = Array.from({ length: 8 }, (_, i) =>
    d(membershipBody("group_member_joined", "g-busy", `u${i + 1}`, i + 2), T0 + i * 1000),
  );
  const busyGroup = [...joins, retryOf(joins[0] as Delivery, 10_000)];

  // 2: two recordings of one session and startTime, two transcripts of one tid, one id reported as
  // a call and as a meeting; each pair processed latest first.
  const id = `v1.us.${appId}.s2`;
  const recording = (duration: string, file: string) =>
    sessionBody("recording_generated", id, (data) => {
      data.startTime = "1696937627";
      data.duration = duration;
      data.recording_url = `https://rec.example/${file}.mp4?sig=1`;
    });
  const transcript = (endTime: number) =>
    sessionBody("transcription_generated", id, (data) => {
      data.tid = "tr-1";
      data.endTime = endTime;
    });
  const [rec1, rec2, tr1, tr2, call, meet] = [
    d(recording("21.433", "a"), T0),
    d(recording("30", "b"), T0 + 1000),
    d(transcript(1696937648), T0 + 2000),
    d(transcript(1696937700), T0 + 3000),
    d(
      sessionBody("call_started", id, (data) => (data.created_at = 1696937600)),
      T0 + 4000,
    ),
    d(
      sessionBody("meeting_started", id, (data) => (data.created_at = 1696937601)),
      T0 + 5000,
    ),
  ] as Delivery[];
  const sessions: BusyHistory = {
    appId,
    deliveries: [rec1, rec2, tr1, tr2, call, meet] as Delivery[],
    reconciles: [],
  };

  // 3: a presence webhook 5 s after the fetch (new avatar, lastActiveAt), applied before the reconcile.
  const F = 1_800_000_000_000;
  const before = d(
    presenceBody("u1", F - 60_000, "online", "https://a.example/old.png", 1_799_999_400),
    F - 59_700,
  );
  const after = d(
    presenceBody("u1", F + 5_000, "online", "https://a.example/new.png", 1_800_000_005),
    F + 5_300,
  );
  const listing = [
    {
      uid: "u1",
      name: "u1",
      status: "online",
      avatar: "https://a.example/old.png",
      lastActiveAt: 1_799_999_400,
    },
  ];

  // 4: online by webhook, the offline webhook lost, a complete listing without the user.
  const online = d(presenceBody("u4", F - 60_000, "online"), F - 59_700);

  // 5: a transcript with neither tid nor startTime.
  const bare = d(
    sessionBody("transcription_generated", `v1.us.${appId}.s5`, (data) => {
      delete data.tid;
      delete data.startTime;
    }),
    T0,
  );

  // 6 and 7: a user with memberships and presence erased, then a replay to the subscriber.
  const erasedOnes = (uid: string, guid: string) => [
    d(membershipBody("group_member_joined", guid, uid, 2), T0),
    d(membershipBody("group_member_joined", guid, `${uid}-friend`, 3), T0 + 1000),
    d(presenceBody(uid, T0 + 1500, "online"), T0 + 2000),
    d(presenceBody(`${uid}-friend`, T0 + 2500, "online"), T0 + 3000),
  ];
  const six = erasedOnes("u6", "g6");
  const seven = erasedOnes("u7", "g7");

  return [
    {
      name: "1: a busy group outruns K, in receipt order",
      ...receiptOrder({ appId, deliveries: busyGroup, reconciles: [] }),
    },
    {
      name: "2: session fields decided by whichever fact is processed last",
      history: sessions,
      order: [rec2, rec1, tr2, tr1, meet, call] as Delivery[],
      sizes: [1],
    },
    {
      name: "3: reconcile writes an older listing over newer profile fields",
      history: {
        appId,
        deliveries: [before, after],
        reconciles: [{ at: 1, fetchedAt: F, users: listing, complete: false }],
      },
      order: [before, after],
      sizes: [2],
    },
    {
      name: "4: reconcile's changes never reach the stream",
      history: {
        appId,
        deliveries: [online],
        reconciles: [{ at: 1, fetchedAt: F, users: [], complete: true }],
      },
      order: [online],
      sizes: [1],
    },
    {
      name: "5: a transcript with neither tid nor startTime",
      ...receiptOrder({ appId, deliveries: [bare], reconciles: [] }),
    },
    {
      name: "6: the package's own consumer is never rebuilt after an erasure",
      ...receiptOrder({ appId, deliveries: six, reconciles: [], erase: "u6" }, [4]),
    },
    {
      name: "7: the copy holds the pseudonym's own items, the tables do not",
      ...receiptOrder({ appId, deliveries: seven, reconciles: [], erase: "u7" }, [2]),
    },
  ];
}

/**
 * The K bound's edge (docs/design-and-limits.md, "One state from one set of facts": more than K facts
 * of one part within 2 W, each with a later copy folded before its earliest, may leave the part on
 * an older fact): `ahead` joins of one group each retried 10 s later, the retries processed after
 * the group's newest join and before every original. With `ahead` = K the newest join survives as
 * the last runner-up and the group is exact; one more (the drawn failure of seed 773529009, seven)
 * is beyond the bound, which the drawn property no longer draws.
 */
export function aheadOfOriginals(appId: string, ahead: number): NamedCase {
  const joins = Array.from({ length: ahead + 2 }, (_, i) =>
    delivery(appId, membershipBody("group_member_joined", "g-edge", `u${i + 1}`, i + 2), T0 + i * 1000),
  );
  const early = joins.slice(0, ahead);
  const retries = early.map((j) => retryOf(j, 10_000));
  return {
    name: `${ahead} joins of one group retried ahead of their originals, within 2 W (the K bound's edge)`,
    history: { appId, deliveries: [...joins, ...retries], reconciles: [] },
    order: [...joins.slice(ahead), ...retries, ...early],
    sizes: [1],
  };
}
