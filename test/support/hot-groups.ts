import { createHash } from "node:crypto";
import { fixture, type Loose } from "./fixtures";
import type { Delivery } from "./histories";

/**
 * Hot groups (#57): the bricks of `unit/hot-groups` and `integration/hot-groups`: a membership fact
 * of one busy group as the platform sends it, and the history.
 */

export const APP = "2598234fa1e3b9c";
export const GUID = "hot-class";
export const R0 = 1_763_000_000_000;

/** A membership fact: `uid` did `trigger` in the hot group, which then reported these fields. */
export interface Fact {
  trigger: "group_member_joined" | "group_member_added" | "group_member_left" | "group_member_kicked";
  uid: string;
  membersCount: number;
  onlineMembersCount: number;
  /** The group's `updatedAt` in the payload (seconds), an `info` field. */
  updatedAt: number;
}

/** The body the platform sends for a fact (a template with the fact's fields). */
export function bodyOf(fact: Fact): string {
  const e: Loose = fixture(fact.trigger);
  const [first] = Object.values(e.data.members as Record<string, Loose>);
  e.data.members = { [fact.uid]: { ...first, uid: fact.uid, name: `name of ${fact.uid}` } };
  Object.assign(e.data.group, {
    guid: GUID,
    membersCount: fact.membersCount,
    onlineMembersCount: fact.onlineMembersCount,
    updatedAt: fact.updatedAt,
  });
  return JSON.stringify({ ...e, appId: APP });
}

/** One delivery of `body` received at `receivedAt` (a platform retry: the same bytes, later). */
export function delivery(body: string, receivedAt: number): Delivery {
  return { body, receivedAt, eventId: createHash("sha256").update(body).digest("hex") };
}

/**
 * The history: eight joins 1 s apart reporting 2 … 9 members; the first retried by the
 * platform 10 s later, received after the other seven. Before #57 the first join had left the count
 * part's 6 runner-ups, so its retry was applied as a new fact at its own receipt: 2 members, and the
 * first join's `info`. The tables must show 9 and the last join's `updatedAt` (`expected`).
 */
export function busyGroupHistory() {
  const joins = Array.from({ length: 8 }, (_, i) =>
    delivery(
      bodyOf({
        trigger: "group_member_joined",
        uid: `u${i + 1}`,
        membersCount: i + 2,
        onlineMembersCount: 1,
        updatedAt: R0 / 1000 + i,
      }),
      R0 + i * 1000,
    ),
  );
  const first = joins[0] as Delivery;
  const retry: Delivery = { ...first, receivedAt: first.receivedAt + 10_000 };
  return { joins, first, retry, received: [...joins, retry], expected: [9, R0 / 1000 + 7] };
}
