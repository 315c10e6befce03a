import { namesUid, USERS } from "../../support/writers-model/cast";
import type { Model } from "../../support/writers-model/model";
import { drainSubscriber } from "../../support/writers-model/stream";
import type { Site } from "../../support/writers-model/world";

/*
 * The stream's invariants in the writers model (issue #50), checked after every step: the
 * subscriber's queue is drained into the world first (receipt order, `stream.received`), so the
 * check knows what was published before and after each erasure's notice.
 * - every erasure that ended told the subscriber (its notice, by the erasure's id);
 * - every delivery the subscriber received after that notice carries no erased uid of its app,
 *   nor the user's name when the delivery names them (unless a namesake on it keeps it), and one
 *   that named them carries the erasure's mark: an SQS message cannot be rewritten, so what is sent
 *   from one later (the projector's publish, a redrive, a replay) must be redacted.
 * Before the notice a delivery may still carry the uid: a projector whose cache of the marks is
 * older than the mark publishes it as received (docs/personal-data.md: "The erasure waits until
 * every projector has the mark"), and the notice that follows tells the subscriber to erase it.
 */

/** Drains what the subscriber received since the last step; the stream's violations. */
export async function streamViolations(m: Model, site: Site): Promise<string[]> {
  const { stream } = site;
  await drainSubscriber(stream, m.log.filter((l) => l.startsWith("step: ")).length);
  const found: string[] = [];
  const byId = new Map(m.delivered.map((d) => [d.eventId, d]));
  for (const e of m.erasures) {
    const notice = stream.received.findIndex(
      (r) => r.message.kind === "erasure" && r.message.id === e.erasureId,
    );
    if (notice < 0) {
      found.push(`the erasure notice of ${e.uid} in ${e.app} (${e.erasureId}) never reached the subscriber`);
      continue;
    }
    for (const r of stream.received.slice(notice + 1)) {
      if (r.message.kind !== "delivery" || r.message.appId !== e.app) continue;
      const delivered = byId.get(r.message.eventId);
      const what = `${r.message.trigger} ${r.message.eventId.slice(0, 8)}, received by the subscriber after ${e.uid}'s erasure notice (step ${r.step})`;
      if (namesUid(r.raw, e.uid))
        found.push(`${what} names ${e.uid} (erased as ${e.pseudonym}): ${r.raw.slice(0, 200)}`);
      if (!delivered?.uids.includes(e.uid)) continue;
      if (r.message.erasure === undefined) found.push(`${what} named ${e.uid} and carries no erasure mark`);
      const namesake = delivered.uids.some((u) => u !== e.uid && USERS[u] === USERS[e.uid]);
      if (!namesake && r.raw.includes(USERS[e.uid])) found.push(`${what} still gives ${e.uid}'s name`);
    }
  }
  return found;
}
