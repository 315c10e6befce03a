import { ERASED_MARK_DAYS, type ErasedSubject } from "./erased-subjects";
import { erasureSubject } from "./erasure-state";
import { redactBody, replaceUid } from "./redact";

/**
 * The erasure's reach into what it cannot rewrite (#50): a delivery that names an erased user and
 * was received before the erasure ended (still queued when it ran, in a batch under way, retried,
 * redriven from the dead-letter queue) is redacted as the erasure redacted the archive (its uid as
 * the erasure's pseudonym, their free text removed, marked with the erasure's id) before the
 * projector archives, projects or publishes it. Without it such a delivery brought the uid back
 * (a runner-up of an item, a line) until a second erasure. A delivery received after the erasure
 * ended is processed as any other: the platform still has the user.
 *
 * The marks (`erased-subjects.ts`) hold hashes, never uids: a delivery's identifiers are hashed
 * with its app (`erasureSubject`) and looked up. One read of them per `cacheMs` (a Query), nothing
 * per batch beyond it; an app with no mark costs a map lookup per delivery.
 */

/** What the redaction needs of a delivery (the projector's `QueuedEvent`). */
export interface InFlightDelivery {
  appId: string | undefined;
  receivedAt: number;
  body: string;
  /** Set when redacted here: the erasure's id, as on a line the erasure rewrote. */
  erasure?: string;
  /**
   * Set when redacted here: the pseudonyms it now names in place of erased users. The projector
   * writes no own item of theirs (`isOwnItemOfErased`, packages/stream/src/projections/own-items.ts): the erasure deleted the
   * user's, and a delivery redacted in flight leaves the tables as if projected before the erasure.
   */
  erasedAs?: readonly string[];
  /**
   * Why the delivery was refused as received (`refusalOf`), when it was: redacted with its body
   * (the reason's path may hold a uid: `data.members.<uid>.avatar`).
   */
  refusal?: string;
}

/** A uid as the platform allows it: letters, digits, `_` and `-`, at most 100 characters. */
const UID = /^[A-Za-z0-9_-]{1,100}$/;

/** A string that may hold two uids: a conversation id `<uid_a>_user_<uid_b>`. */
const CONVERSATION = /^[A-Za-z0-9_-]+_user_[A-Za-z0-9_-]+$/;

/**
 * The strings of a body that may be a uid (`UID`: a string or a key), each side of a conversation
 * id (`<uid_a>_user_<uid_b>`, split at each `_user_`), and each `<@uid:…>` mention. What the marks'
 * hashes are looked up by.
 *
 * @example identifiersIn('{"conversationId":"u1_user_u2","text":"hi <@uid:u3>"}') // Set { "conversationId", "u1_user_u2", "u1", "u2", "text", "u3" }
 */
export function identifiersIn(body: string): Set<string> {
  const found = new Set<string>();
  const add = (text: string) => {
    if (text.includes("<@uid:"))
      for (const [, uid] of text.matchAll(/<@uid:([^>\s]+)>/g)) if (uid) found.add(uid);
    if (UID.test(text)) found.add(text);
    if (!CONVERSATION.test(text)) return;
    const parts = text.split("_user_");
    for (let i = 1; i < parts.length; i++) {
      found.add(parts.slice(0, i).join("_user_"));
      found.add(parts.slice(i).join("_user_"));
    }
  };
  const walk = (node: unknown) => {
    if (typeof node === "string") add(node);
    else if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === "object")
      for (const [key, value] of Object.entries(node)) {
        add(key);
        walk(value);
      }
  };
  try {
    walk(JSON.parse(body));
  } catch {
    // Not JSON: refused (quarantined) and in no figure; only a mention could name someone.
    add(body);
  }
  return found;
}

/** How the list is read and kept. */
export interface InFlightOptions {
  /** How long a read is trusted, ms (the projector's cache of the apps table). */
  cacheMs: number;
  now: () => number;
  /** Told when a read fails: the last list read (none at first) is kept, and read again after `cacheMs`. */
  onReadError?: (error: unknown) => void;
}

/**
 * A redaction of deliveries in flight over the erased subjects that `list` reads, read at most
 * once per `cacheMs` (a failed read keeps the last list and is tried again after `cacheMs`: it
 * never fails a batch). Returns each delivery redacted, or the same object when no erased subject
 * of its app names it.
 *
 * @example const redact = erasedInFlight((now) => marks.list(now), { cacheMs: 60_000, now: Date.now }); events = await redact(events)
 */
export function erasedInFlight(
  list: (nowMs: number) => Promise<readonly ErasedSubject[]>,
  { cacheMs, now, onReadError }: InFlightOptions,
): <T extends InFlightDelivery>(deliveries: readonly T[]) => Promise<T[]> {
  let byApp = new Map<string, Map<string, ErasedSubject>>();
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;
  const refresh = () =>
    (reading ??= list(now())
      .then((marks) => {
        const next = new Map<string, Map<string, ErasedSubject>>();
        for (const mark of marks) {
          const ofApp = next.get(mark.appId) ?? new Map<string, ErasedSubject>();
          ofApp.set(mark.subject, mark);
          next.set(mark.appId, ofApp);
        }
        byApp = next;
        readAt = now();
      })
      .catch((error: unknown) => {
        // The last list kept, read again once `cacheMs` has passed: a failing read is not made per batch.
        readAt = now();
        onReadError?.(error);
      })
      .finally(() => {
        reading = undefined;
      }));
  return async (deliveries) => {
    if (now() - readAt >= cacheMs) await refresh();
    return deliveries.map((delivery) => {
      const marks = delivery.appId === undefined ? undefined : byApp.get(delivery.appId);
      return marks ? redactDelivery(delivery, marks, now()) : delivery;
    });
  };
}

/** A delivery with each erased subject of its app that it names redacted (received before its erasure ended). */
function redactDelivery<T extends InFlightDelivery>(
  delivery: T,
  marks: ReadonlyMap<string, ErasedSubject>,
  nowMs: number,
): T {
  let { body } = delivery;
  let erasure: string | undefined;
  let { refusal } = delivery;
  const erasedAs = new Set<string>();
  const applies = (mark: ErasedSubject | undefined): mark is ErasedSubject =>
    mark !== undefined &&
    mark.expiresAt * 1000 > nowMs &&
    (mark.until === undefined || delivery.receivedAt <= mark.until);
  for (const uid of identifiersIn(delivery.body)) {
    const mark = marks.get(erasureSubject(delivery.appId ?? "", uid));
    if (!applies(mark)) continue;
    const next = redactBody(body, { uid, names: [], pseudonym: mark.pseudonym });
    if (next === body) continue;
    body = next;
    erasure ??= mark.erasureId;
    erasedAs.add(mark.pseudonym);
    if (refusal !== undefined) refusal = replaceUid(refusal, { uid, pseudonym: mark.pseudonym });
  }
  // A body the erasure redacted already (one kept in the bucket, `oversize/`, which it rewrites
  // while the pointer to it is queued) names their pseudonym: marked with that erasure too, so that
  // its line and its envelope say so as those the erasure rewrote do (replay skips it, resend
  // refuses it). Looked up only in an app with marks (this map), by the marks' pseudonyms.
  if (erasure === undefined && delivery.erasure === undefined)
    for (const mark of marks.values())
      if (applies(mark) && body.includes(mark.pseudonym) && identifiersIn(body).has(mark.pseudonym)) {
        erasure = mark.erasureId;
        erasedAs.add(mark.pseudonym);
        break;
      }
  return erasure === undefined
    ? delivery
    : {
        ...delivery,
        body,
        erasure: delivery.erasure ?? erasure,
        erasedAs: [...erasedAs],
        ...(refusal === undefined ? {} : { refusal }),
      };
}

/**
 * The mark of one user's erasure: while it runs (`until` absent: every delivery naming them is
 * redacted), and once it ended at `until` (epoch ms). It lapses `ERASED_MARK_DAYS` after.
 *
 * @example erasedMark({ appId: "app1", uid: "u7", erasureId: "e1", pseudonym: "erased-7f" }, Date.now())
 */
export function erasedMark(
  erasure: { appId: string; uid: string; erasureId: string; pseudonym: string },
  at: number,
  until?: number,
): ErasedSubject {
  return {
    subject: erasureSubject(erasure.appId, erasure.uid),
    appId: erasure.appId,
    erasureId: erasure.erasureId,
    pseudonym: erasure.pseudonym,
    ...(until === undefined ? {} : { until }),
    expiresAt: Math.ceil(((until ?? at) + ERASED_MARK_DAYS * 86_400_000) / 1000),
  };
}
