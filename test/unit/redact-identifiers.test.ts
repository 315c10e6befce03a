import { readdirSync, readFileSync } from "node:fs";
import { parseWebhookEvent } from "@webhook-backend/stream/events/schemas";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  mentionsUid,
  namesOf,
  type Redaction,
  redactArchiveLine,
  redactBody,
  redactValue,
  referencesOf,
} from "../../shared/erasure/redact";
import { archiveLine } from "../../shared/projector/raw-archive";
import { rederivedLine } from "../../tools/ops/archive-repair";
import { allFixtures, fixtureText } from "../support/fixtures";
import { queuedAt } from "../support/queued";

/**
 * What a redaction keeps so that every later reader reads the same facts (#50, defects 1 and 2):
 * every field a schema requires, and every other user's uid, however it starts or ends.
 */

/** Every payload the tests know: the fixtures (templates, variants, shapes seen live) and the platform's published examples. */
function payloads(): Array<{ name: string; body: string }> {
  const examples = new URL("../examples/", import.meta.url);
  const published = readdirSync(examples, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".json"))
    .map((f) => ({ name: `examples/${f}`, body: readFileSync(new URL(f, examples), "utf8") }));
  return [...allFixtures().map(({ name }) => ({ name, body: fixtureText(name) })), ...published];
}

/** The uids a payload names: every identifier field's value, and the keys of its user maps. */
function uidsOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) uidsOf(v, into);
  else if (value && typeof value === "object")
    for (const [key, v] of Object.entries(value)) {
      if (["uid", "sender", "receiver", "by", "owner", "messageSender", "receiptSender"].includes(key))
        if (typeof v === "string" && v) into.add(v);
      if (["members", "users", "mentions"].includes(key) && v && typeof v === "object")
        for (const k of Object.keys(v)) into.add(k);
      uidsOf(v, into);
    }
  return into;
}

/** The free text about a person left on the entities of `uid` (an object whose `uid` it is). */
function personalOf(value: unknown, uid: string, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) personalOf(v, uid, into);
  else if (value && typeof value === "object") {
    const object = value as Record<string, unknown>;
    if (object.uid === uid)
      for (const key of ["name", "avatar", "link", "metadata", "statusMessage", "tags"])
        if (key in object) into.push(key);
    for (const v of Object.values(object)) personalOf(v, uid, into);
  }
  return into;
}

/** Each payload with each uid it names: one erasure each, as `forget` would learn it (names, sessions their uid ties). */
const CASES = payloads().flatMap(({ name, body }) => {
  const parsed: unknown = JSON.parse(body);
  return [...uidsOf(parsed)].map((uid) => ({
    name,
    body,
    redaction: {
      uid,
      names: namesOf(parsed, uid),
      sessions: mentionsUid(body, uid) ? referencesOf(parsed).sessions : [],
      pseudonym: "erased-0123456789abcdef",
      erasureId: "e-50",
    } satisfies Redaction,
  }));
});

describe("a redacted line is read as the same fact (#50, defect 1)", () => {
  it("still satisfies its trigger's schema, and rederive derives the same event time, natural key and rank from it, the mark kept (fast-check over every payload and uid)", () => {
    expect(CASES.length).toBeGreaterThan(100);
    fc.assert(
      fc.property(fc.constantFrom(...CASES), fc.stringMatching(/^[0-9a-f]{16}$/), (c, hex) => {
        // Prepare: the line the projector archives.
        const parsed: unknown = JSON.parse(c.body);
        const trigger = String((parsed as { trigger?: unknown }).trigger);
        const line = archiveLine(queuedAt({ trigger, appId: "a", body: c.body }, 1_700_000_000_000));
        const redaction = { ...c.redaction, pseudonym: `erased-${hex}` };

        // Act
        const text = redactArchiveLine(JSON.stringify({ ...line, appId: "a" }), "a", redaction);

        // Assess: read again by today's code, nothing changes: the same kind, the same facts, the mark.
        fc.pre(text !== undefined);
        const redacted = JSON.parse(text ?? "{}");
        expect(parseWebhookEvent(JSON.parse(redacted.body)).kind, c.name).toBe(
          parseWebhookEvent(parsed).kind,
        );
        expect(rederivedLine(redacted), c.name).toEqual(redacted);
        expect(redacted.erasure).toBe("e-50");
        // What the schemas require and it kept is no free text of theirs: their entities hold no name,
        // avatar, link, metadata, status message or tags.
        expect(personalOf(JSON.parse(redacted.body), redaction.pseudonym), c.name).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it("a refused line that the redaction made acceptable (its member's malformed avatar removed) stays refused: rederive derives no fact from it", () => {
    // Prepare: a join refused for its member's avatar (a number): archived without facts.
    const body = JSON.parse(fixtureText("group_member_joined"));
    body.data.members["cometchat-uid-2"].avatar = 404;
    const line = archiveLine(queuedAt({ trigger: body.trigger, appId: "a", body: JSON.stringify(body) }, 1));
    const redaction: Redaction = { uid: "cometchat-uid-2", names: [], pseudonym: "erased-1", erasureId: "e" };

    // Act
    const redacted = JSON.parse(redactArchiveLine(JSON.stringify(line), "a", redaction) ?? "{}");

    // Assess: the redacted body passes its schema now, and the line still counts no fact.
    expect(line.naturalKey).toBeUndefined();
    expect(parseWebhookEvent(JSON.parse(redacted.body)).kind).toBe("known");
    expect(rederivedLine(redacted)).toEqual(redacted);
  });

  it("keeps a call's data.action, a reaction's ids and an edit's action layout, which the schemas require", () => {
    const redaction: Redaction = { uid: "cometchat-uid-1", names: [], pseudonym: "erased-1", erasureId: "e" };
    const redacted = (name: string) => JSON.parse(redactBody(fixtureText(name), redaction));
    const call = redacted("call_initiated");
    const reaction = redacted("message_reaction_added");
    const edit = redacted("message_edited");
    expect(call).toMatchObject({ data: { call: { data: { action: "initiated" } } } });
    expect(reaction).toMatchObject({ data: { reaction: { id: "811", messageId: "57", uid: "erased-1" } } });
    expect(edit).toMatchObject({ data: { message: { data: { action: "edited", entities: { on: {} } } } } });
    // Free text still goes: the edited message's words, the reactor's name.
    expect(JSON.stringify([call, reaction, edit])).not.toMatch(/Andrew Joseph|"hello"/);
  });
});

describe("a uid that prefixes another (#50, defect 2)", () => {
  /** A payload naming both users in every form an identifier takes: whole, conversation ids, mention markup, item and natural keys, map keys. */
  const naming = (a: string, b: string) => ({
    conversationId: `${a}_user_${b}`,
    reverse: `${b}_user_${a}`,
    own: `${b}_user_${b}`,
    text: `hi <@uid:${b}>, <@uid:${a}> here`,
    item: `app#${b}`,
    natural: `app|message_read_receipt|m1|${b}|${a}`,
    ids: [a, b],
    [b]: { since: 1 },
    [a]: { since: 2 },
  });
  const FIELD_NAMES = new Set([
    ...Object.keys(naming("x", "y")),
    "uid",
    "sender",
    "user",
    "data",
    "occupant",
    "name",
  ]);
  const base = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);
  const rest = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,5}$/);
  /** Two uids, one the other with `_` and more after or before it (`john`, `john_doe`; `doe`, `john_doe`). */
  const pairs = fc
    .tuple(base, rest, fc.boolean())
    .map(([a, more, after]) => ({ a, b: after ? `${a}_${more}` : `${more}_${a}` }))
    .filter(({ a, b }) => a !== b && !b.includes("_user") && !b.startsWith("user_"))
    // Not a key of the payload itself, nor one the redaction reads (`uid`, `sender`, …).
    .filter(({ a, b }) => ![a, b].some((u) => FIELD_NAMES.has(u)));

  it("forgetting one leaves the other whole in every form, whose own erasure then finds and replaces it (fast-check over uids with prefixes and underscores)", () => {
    fc.assert(
      fc.property(pairs, fc.boolean(), ({ a, b }, firstShorter) => {
        // Prepare: the first erased is the shorter uid or the longer one.
        const [first, second] = firstShorter ? [a, b] : [b, a];
        const p1 = "erased-1111111111111111";
        const p2 = "erased-2222222222222222";
        const subject = (uid: string, pseudonym: string) => ({ uid, names: [], pseudonym });

        // Act
        const once = redactValue(naming(a, b), subject(first, p1));
        const twice = redactValue(once, subject(second, p2));

        // Assess: the first erasure changed the first uid only; the second finds the second uid whole.
        const fill = (uid: string, p: string, x: string) => (x === uid ? p : x);
        const ra = fill(first, p1, a);
        const rb = fill(first, p1, b);
        expect(once).toEqual(naming(ra, rb));
        expect(mentionsUid(JSON.stringify(once), second)).toBe(true);
        expect(twice).toEqual(naming(fill(second, p2, ra), fill(second, p2, rb)));
        expect(mentionsUid(JSON.stringify(twice), first) || mentionsUid(JSON.stringify(twice), second)).toBe(
          false,
        );
      }),
      { numRuns: 300 },
    );
  });

  it("the forms the old pattern took for the user's own: john inside john_doe, group_john; the conversation id's sides it still finds", () => {
    expect(mentionsUid("john_doe", "john")).toBe(false);
    expect(mentionsUid("doe_john", "john")).toBe(false);
    expect(mentionsUid("group_john", "john")).toBe(false);
    expect(mentionsUid("john_user_doe", "john")).toBe(true);
    expect(mentionsUid("doe_user_john", "john")).toBe(true);
    expect(mentionsUid("john_doe_user_bob", "john")).toBe(false);
    expect(mentionsUid("john_doe_user_bob", "john_doe")).toBe(true);
  });
});
