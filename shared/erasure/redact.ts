import { isDeepStrictEqual } from "node:util";
import { NOTHING_REQUIRED, type Required, requiredOfBody } from "./required-fields";

/**
 * Redaction of one user out of what the platform sent about them (#34), as pure functions: the
 * erasure (`forget.ts`) applies them to archive lines, quarantine records, oversize bodies and
 * table items. A redaction replaces the user's id, wherever it stands as an identifier, with one
 * random pseudonym per erasure (the same in every object, so that distinct counts, natural keys
 * and every figure recomputed afterwards are unchanged), and removes the free text that is theirs,
 * never a field the payload's schema requires (`required-fields.ts`).
 */

/** One erasure as the redaction applies it. */
export interface Redaction {
  /** The user's id, as the platform sends it. */
  uid: string;
  /**
   * The names the user went by (their entity's `name` in the archive, their presence item's): a
   * call's occupants are named, not identified, so a name stands for the uid there.
   */
  names: readonly string[];
  /**
   * The sessions (calls, meetings) the uid ties to the user: a line that names their uid names the
   * session, or they initiated or received it. Only there is an occupant bearing one of their
   * names theirs: elsewhere a name may be a namesake's, and is left. Absent: none.
   */
  sessions?: readonly string[];
  /** What replaces it everywhere: random (`newPseudonym`), never derived from the uid. */
  pseudonym: string;
  /** The erasure's id, stamped on each redacted archive line (`erasure`). */
  erasureId: string;
}

/**
 * The fields kept of the user's own entity (an object whose `uid` is theirs: the sender or
 * receiver of a message, a member, a participant, a reactor, a mention, the presence user): its
 * identifiers, roles and times. Everything else (name, avatar, link, metadata, status message,
 * tags, e-mail …) is free text about a person, and removed.
 */
const ENTITY_KEPT = new Set([
  "uid",
  "role",
  "scope",
  "status",
  "conversationId",
  "lastActiveAt",
  "createdAt",
  "updatedAt",
  "joinedAt",
  "deactivatedAt",
  "hasJoined",
  "isJoined",
  "blockedByMe",
  "hasBlockedMe",
]);

/** Of a message the user sent, what its `data` keeps: the entities and mentions (redacted), not the text or attachments. */
const OWN_MESSAGE_DATA_KEPT = new Set(["entities", "mentions"]);

/** Of the user's own connection (presence), what is kept: how and when, not from where (IP, origin, user agent). */
const CONNECTION_KEPT = new Set(["action", "platform", "connectedAt", "appInfo"]);
const APP_INFO_KEPT = new Set(["version", "apiVersion", "uts"]);

/** What a value's redaction needs (an erasure without its id). */
export type Subject = Pick<Redaction, "uid" | "names" | "pseudonym" | "sessions">;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What a uid the platform allows is made of: letters, digits, `_` and `-`; anything else ends it. */
const ID = "A-Za-z0-9_-";

/**
 * The uid as an identifier inside a text: whole (no letter, digit, `_` or `-` touching it: `u1` in
 * `u1`, `<@uid:u1>`, `app#u1`, `app|trigger|u1`, never in `u10`, `u1-b` or `u1_doe`), or one side
 * of a conversation id, whose form `<uid_a>_user_<uid_b>` is parsed as such (`u1` in `u1_user_u2`
 * and `u2_user_u1`). So `john` is never found inside `john_doe`, whose own erasure then finds them
 * (#50, defect 2). A conversation id between uids that themselves hold `_user_` reads either way.
 */
function uidPattern(uid: string): RegExp {
  const u = escapeRegExp(uid);
  const whole = `(?<![${ID}])${u}(?![${ID}])`;
  const first = `(?<![${ID}])${u}(?=_user_[${ID}])`;
  const second = `(?<=[${ID}]_user_)${u}(?![${ID}])`;
  return new RegExp(`${whole}|${first}|${second}`, "g");
}

/**
 * Whether a text holds the uid as an identifier (`uidPattern`).
 *
 * @example mentionsUid("cometchat-uid-1_user_cometchat-uid-2", "cometchat-uid-2") // true
 * @example mentionsUid("john_doe", "john") // false
 */
export function mentionsUid(text: string, uid: string): boolean {
  return text.includes(uid) && uidPattern(uid).test(text);
}

/** A text with each of the uid's occurrences as an identifier replaced by the pseudonym. */
export function replaceUid(text: string, redaction: Pick<Redaction, "uid" | "pseudonym">): string {
  if (!text.includes(redaction.uid)) return text;
  return text.replace(uidPattern(redaction.uid), redaction.pseudonym);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The entries of an object whose key is kept, or required by its schema. */
const pick = (object: Record<string, unknown>, kept: ReadonlySet<string>, required: ReadonlySet<string>) =>
  Object.fromEntries(Object.entries(object).filter(([key]) => kept.has(key) || required.has(key)));

/**
 * An object of the payload with the user's free text removed (before its ids are replaced), every
 * field its schema requires kept (`required`: a reaction is an object with their `uid` too, and
 * keeps its ids; their call or edit keeps its `data.action`).
 */
function withoutFreeText(
  object: Record<string, unknown>,
  uid: string,
  required: Required,
): Record<string, unknown> {
  if (object.uid === uid) return pick(object, ENTITY_KEPT, required.keys);
  let next = object;
  if (object.sender === uid && ("data" in object || "conversationId" in object)) {
    // A message of theirs: its text, attachments and metadata go; what it is and who it involves stay.
    next = Object.fromEntries(
      Object.entries(object).flatMap(([key, item]): Array<[string, unknown]> => {
        if (key === "data" && isRecord(item))
          return [[key, pick(item, OWN_MESSAGE_DATA_KEPT, required.child(key).keys)]];
        return (key !== "data" && key !== "metadata") || required.keys.has(key) ? [[key, item]] : [];
      }),
    );
  }
  if (isRecord(object.user) && object.user.uid === uid && isRecord(object.currentConnection)) {
    // Their own connection (presence): where from (IP, origin, user agent) goes.
    const within = required.child("currentConnection");
    const connection = pick(object.currentConnection, CONNECTION_KEPT, within.keys);
    if (isRecord(connection.appInfo))
      connection.appInfo = pick(connection.appInfo, APP_INFO_KEPT, within.child("appInfo").keys);
    next = { ...next, currentConnection: connection };
  }
  return next;
}

/**
 * Where the schema says a name names a person who has no uid there (a call's occupants are
 * named, never identified): the container's key, and how its persons sit in it. `occupant` is
 * one person (`data.occupant`), `all_occupants` a list of them (`call_ended`, `meeting_ended`),
 * `participants` a session item's stints keyed by `<name>|<joinedAt>`. Anywhere else a string
 * equal to one of the user's names is someone else's words (a message saying "Thanks"), an
 * enumeration (`receiverType: "user"`) or another thing's name (a group's): left as it is. And a
 * person named so is the user only in a session their uid ties to them (`Redaction.sessions`):
 * in a call between two others, one bearing the same name is a namesake (#50, defect 7).
 */
const NAMED_PERSONS = { occupant: "one", all_occupants: "list", participants: "map" } as const;

/** The keys that name the session (call, meeting) a payload or item is about. */
const SESSION_KEYS = ["sessionId", "sessionid"] as const;

/** The session a node names, else the one around it. */
function sessionOf(node: Record<string, unknown>, around: string | undefined): string | undefined {
  for (const key of SESSION_KEYS) if (typeof node[key] === "string") return node[key] as string;
  return around;
}

/** One erasure's redaction of a value, and the names it replaced (a natural key holds them too). */
function redactNamed(
  value: unknown,
  redaction: Subject,
  required: Required = NOTHING_REQUIRED,
): { value: unknown; replaced: Set<string> } {
  const replaced = new Set<string>();
  const tied = new Set(redaction.sessions ?? []);
  const uid = (s: string) => replaceUid(s, redaction);
  /** A person named, not identified: their name is the pseudonym where it is one of the user's, in their session. */
  const person = (node: unknown, within: Required, session: string | undefined): unknown => {
    if (!isRecord(node) || "uid" in node) return walk(node, within, session);
    const name = node.name;
    if (typeof name !== "string" || !redaction.names.includes(name) || !session || !tied.has(session))
      return walk(node, within, session);
    replaced.add(name);
    const rest = walk({ ...node, name: "" }, within, session) as Record<string, unknown>;
    return { ...rest, name: redaction.pseudonym };
  };
  /** A map of stints keyed by `<name>|<joinedAt>`: a stint renamed is keyed by its new name. */
  const stints = (map: Record<string, unknown>, within: Required, session: string | undefined) =>
    Object.fromEntries(
      Object.entries(map).map(([key, stint]) => {
        const next = person(stint, within.child(key), session);
        const before = isRecord(stint) ? stint.name : undefined;
        const after = isRecord(next) ? next.name : undefined;
        const renamed =
          typeof before === "string" && before !== after && key.startsWith(`${before}|`)
            ? `${String(after)}${key.slice(before.length)}`
            : uid(key);
        return [renamed, next];
      }),
    );
  const walk = (node: unknown, within: Required, around: string | undefined): unknown => {
    if (typeof node === "string") return uid(node);
    if (Array.isArray(node)) return node.map((item, i) => walk(item, within.child(String(i)), around));
    if (!isRecord(node)) return node;
    const session = sessionOf(node, around);
    const object = withoutFreeText(node, redaction.uid, within);
    return Object.fromEntries(
      Object.entries(object).map(([key, item]) => {
        const holds = NAMED_PERSONS[key as keyof typeof NAMED_PERSONS];
        const below = within.child(key);
        if (holds === "one") return [uid(key), person(item, below, session)];
        if (holds === "list" && Array.isArray(item))
          return [uid(key), item.map((p, i) => person(p, below.child(String(i)), session))];
        if (holds === "map" && isRecord(item)) return [uid(key), stints(item, below, session)];
        return [uid(key), walk(item, below, session)];
      }),
    );
  };
  return { value: walk(value, required, undefined), replaced };
}

/**
 * A JSON value with the user redacted: their entity (an object whose `uid` is theirs) reduced to
 * its ids, roles and times, the text, attachments and metadata of their messages and the origin of
 * their connections removed, and their uid replaced by the pseudonym in every string and key (ids,
 * conversation ids, natural keys, mention markup). A name is replaced only where the schema says
 * it names a person without a uid (`NAMED_PERSONS`: a call's occupant, a session's stint and its
 * key `<name>|<joinedAt>`); the same words anywhere else are left, as is the name of another
 * user's entity (two users may share a display name). Anything not about them is returned as it was.
 *
 * @example redactValue({ uid: "u1", name: "Ann" }, { uid: "u1", names: ["Ann"], pseudonym: "erased-7f" }) // { uid: "erased-7f" }
 * @example redactValue({ data: { occupant: { name: "Ann", joined_at: 1 }, text: "Ann" } }, subject) // { data: { occupant: { name: "erased-7f", joined_at: 1 }, text: "Ann" } }
 */
export function redactValue(value: unknown, redaction: Subject): unknown {
  return redactNamed(value, redaction).value;
}

/** A raw body redacted, and the names it replaced. */
function redactBodyNamed(body: string, redaction: Subject): { body: string; replaced: Set<string> } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    // Nothing in it says where a person is named: only the uid ties it to the user.
    return { body: mentionsUid(body, redaction.uid) ? "" : body, replaced: new Set() };
  }
  const { value, replaced } = redactNamed(parsed, redaction, requiredOfBody(parsed));
  return { body: isDeepStrictEqual(value, parsed) ? body : JSON.stringify(value), replaced };
}

/**
 * A raw body with the user redacted (`redactValue`); a body that is not JSON (refused, in no
 * figure) and holds their uid is emptied, since nothing in it can be told apart (their names do
 * not tie it to them: nothing says where a name is a person's).
 *
 * @example redactBody('{"sender":"u1"}', subject) // '{"sender":"erased-7f"}'
 */
export function redactBody(body: string, redaction: Subject): string {
  return redactBodyNamed(body, redaction).body;
}

/**
 * One line of an archive object (raw, edge) or a quarantine record, redacted if it is of the app
 * and names the user: its body (`redactBody`), natural key and error replaced, and `erasure` set
 * to the erasure's id (what `query event` shows). Returns undefined when the line is not the
 * user's to change: the caller then keeps its bytes as they were.
 *
 * @example redactArchiveLine('{"eventId":"e","appId":"a","body":"{\\"uid\\":\\"u1\\"}"}', "a", redaction) // '{"eventId":"e","appId":"a","body":"{\\"uid\\":\\"erased-7f\\"}","erasure":"e1"}'
 */
export function redactArchiveLine(text: string, appId: string, redaction: Redaction): string | undefined {
  let line: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isRecord(parsed)) return undefined;
    line = parsed;
  } catch {
    return undefined;
  }
  if (line.appId !== appId) return undefined;
  const next: Record<string, unknown> = { ...line };
  const body = typeof line.body === "string" ? redactBodyNamed(line.body, redaction) : undefined;
  if (body) next.body = body.body;
  if (typeof line.error === "string") next.error = replaceUid(line.error, redaction);
  if (typeof line.naturalKey === "string")
    next.naturalKey = redactNaturalKey(line.naturalKey, body?.replaced ?? new Set(), redaction);
  if (isDeepStrictEqual(next, line)) return undefined;
  next.erasure = redaction.erasureId;
  return JSON.stringify(next);
}

/**
 * A natural key (`<app>|<trigger>|<parts…>`, each part URI-encoded) with the uid replaced, and
 * each part that is a name the body's redaction replaced (an occupant's) as the pseudonym: the
 * key stays one to one with the fact, so every count by natural key is unchanged.
 */
function redactNaturalKey(key: string, replaced: ReadonlySet<string>, redaction: Subject): string {
  const encoded = new Set([...replaced].map(encodeURIComponent));
  return replaceUid(key, redaction)
    .split("|")
    .map((part) => (encoded.has(part) ? encodeURIComponent(redaction.pseudonym) : part))
    .join("|");
}

/**
 * The text of an NDJSON object with the user's lines redacted (`redactArchiveLine`) and every other
 * line byte for byte as it was. Returns the new text and how many lines changed (0: leave the object).
 */
export function redactNdjson(
  text: string,
  appId: string,
  redaction: Redaction,
): { text: string; redacted: number } {
  let redacted = 0;
  const lines = text.split("\n").map((line) => {
    const next = redactArchiveLine(line, appId, redaction);
    if (next === undefined) return line;
    redacted++;
    return next;
  });
  return { text: lines.join("\n"), redacted };
}

/** Keys whose values name the groups and sessions a payload is about: where the tables hold the user too. */
const REFERENCE_KEYS = { guid: "groups", sessionId: "sessions", sessionid: "sessions" } as const;

/**
 * The group and session ids a payload names (`guid`, `sessionId` at any depth): the table items an
 * erasure looks at besides the user's own.
 *
 * @example referencesOf({ data: { group: { guid: "g1" } } }) // { groups: ["g1"], sessions: [] }
 */
export function referencesOf(value: unknown): { groups: string[]; sessions: string[] } {
  const found = { groups: new Set<string>(), sessions: new Set<string>() };
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (isRecord(node))
      for (const [key, item] of Object.entries(node)) {
        const kind = REFERENCE_KEYS[key as keyof typeof REFERENCE_KEYS];
        if (kind && typeof item === "string") found[kind].add(item);
        else walk(item);
      }
  };
  walk(value);
  return { groups: [...found.groups], sessions: [...found.sessions] };
}

/**
 * The names the user goes by in a payload: the `name` of each of their entities (an object whose
 * `uid` is theirs).
 *
 * @example namesOf({ sender: { uid: "u1", name: "Ann" } }, "u1") // ["Ann"]
 */
export function namesOf(value: unknown, uid: string, into: Set<string> = new Set()): string[] {
  if (Array.isArray(value)) for (const v of value) namesOf(v, uid, into);
  else if (isRecord(value)) {
    if (value.uid === uid && typeof value.name === "string" && value.name) into.add(value.name);
    for (const v of Object.values(value)) namesOf(v, uid, into);
  }
  return [...into];
}

/** The projection tables whose items are one user's own (their key holds the uid): the erasure deletes them. */
const OWN_ITEM = {
  presence: () => true,
  memberships: (item: Record<string, unknown>, uid: string) => item.uid === uid,
} as const;

/**
 * What the erasure makes of one table item: the user's own (their presence, their memberships)
 * `null`, deleted; one that names them redacted (`redactValue`: every field, the bookkeeping of
 * seen events and runner-up versions included); any other `undefined`, left as it is. The one
 * rule for the run, its dry run and its re-check.
 *
 * @example itemErasure("groups", { pk: "a#g1", owner: "u1", rev: 3 }, redaction) // { pk: "a#g1", owner: "erased-7f", rev: 3 }
 */
export function itemErasure(
  table: string,
  item: Record<string, unknown>,
  redaction: Subject,
): Record<string, unknown> | null | undefined {
  const own = OWN_ITEM[table as keyof typeof OWN_ITEM];
  if (own?.(item, redaction.uid)) return null;
  const next = redactValue(item, redaction);
  return isDeepStrictEqual(next, item) ? undefined : (next as Record<string, unknown>);
}
