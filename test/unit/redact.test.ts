import { readdirSync, readFileSync } from "node:fs";
import {
  DeleteObjectsCommand,
  ListObjectVersionsCommand,
  type ListObjectVersionsCommandOutput,
  type S3Client,
} from "@aws-sdk/client-s3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { s3ObjectVersions } from "../../shared/erasure/object-versions";
import {
  itemErasure,
  mentionsUid,
  namesOf,
  type Redaction,
  redactArchiveLine,
  redactBody,
  redactNdjson,
  redactValue,
  referencesOf,
} from "../../shared/erasure/redact";
import { fixture } from "../support/fixtures";

const ANDREW: Redaction = {
  uid: "cometchat-uid-1",
  names: ["Andrew Joseph"],
  pseudonym: "erased-0f1e2d3c4b5a6978",
  erasureId: "e-1",
};

/** The platform's published examples (test/examples), by file name. */
const EXAMPLES_DIR = new URL("../examples/", import.meta.url);
const EXAMPLES = readdirSync(EXAMPLES_DIR).filter((f) => f.endsWith(".json"));
const example = (file: string): string => readFileSync(new URL(file, EXAMPLES_DIR), "utf8");

describe("redaction of one user (#34)", () => {
  it.each(EXAMPLES)("leaves no trace of the user in the published %s, and changes nothing else", (name) => {
    // Prepare: their names, as the erasure learns them (their entities' names).
    const body = example(name);
    const names = namesOf(JSON.parse(body), ANDREW.uid);
    const redaction = { ...ANDREW, names };

    // Act
    const redacted = redactBody(body, redaction);

    // Assess: neither their uid as an identifier, nor their name, IP or own text.
    expect(mentionsUid(redacted, ANDREW.uid)).toBe(false);
    for (const n of names) expect(redacted).not.toContain(`"${n}"`);
    expect(redacted).not.toContain("3.128.113.92");
    // Another user's uid stays where it was.
    if (body.includes("cometchat-uid-2")) expect(redacted).toContain("cometchat-uid-2");
    if (!mentionsUid(body, ANDREW.uid)) expect(redacted).toBe(body);
  });

  it("replaces the uid as an identifier (ids, conversation ids, mention markup, keys), never inside another uid", () => {
    const r = { ...ANDREW, uid: "u1", names: [] };
    expect(redactValue({ a: "u1_user_u2", b: "Hi <@uid:u1>", c: "u10", d: "u1-b", u1: 1 }, r)).toEqual({
      a: `${r.pseudonym}_user_u2`,
      b: `Hi <@uid:${r.pseudonym}>`,
      c: "u10",
      d: "u1-b",
      [r.pseudonym]: 1,
    });
  });

  it("removes the text, attachments and metadata of the user's messages, keeps those of others", () => {
    const own = fixture("message_sent");
    own.data.message.metadata = { secret: "x" };
    const redacted = redactValue(own, ANDREW) as typeof own;
    expect(redacted.data.message.data.text).toBeUndefined();
    expect(redacted.data.message.metadata).toBeUndefined();
    expect(redacted.data.message.data.entities.sender.entity).toEqual({
      uid: ANDREW.pseudonym,
      status: "available",
      role: "default",
      lastActiveAt: 1696934440,
    });
    const theirs = fixture("message_sent");
    theirs.data.message.sender = "cometchat-uid-2";
    theirs.data.message.data.entities.sender.entity.uid = "cometchat-uid-2";
    expect((redactValue(theirs, ANDREW) as typeof own).data.message.data.text).toBe("hi");
  });

  it("names a call's occupants by the pseudonym where they bore the user's name, in a session their uid ties to them", () => {
    const ended = fixture("call_ended");
    const redacted = JSON.stringify(redactValue(ended, { ...ANDREW, sessions: [ended.data.sessionId] }));
    expect(redacted).not.toContain("Andrew Joseph");
    expect(redacted).toContain(`"name":"${ANDREW.pseudonym}"`);
    expect(redacted).toContain("George Alan");
  });

  it("leaves an occupant who bears the user's name in a session their uid does not tie to them: a namesake (#50, defect 7)", () => {
    const ended = fixture("call_ended");
    expect(redactValue(ended, { ...ANDREW, sessions: ["another-session"] })).toEqual(ended);
    expect(redactValue(ended, ANDREW)).toEqual(ended);
    const session = {
      pk: "a#s2",
      sessionId: "s2",
      participants: { "Andrew Joseph|1": { name: "Andrew Joseph", joinedAt: 1 } },
    };
    expect(itemErasure("sessions", session, { ...ANDREW, sessions: ["s1"] })).toBeUndefined();
  });

  it("names the user's stints in a session item by the pseudonym, keys included", () => {
    const session = {
      pk: "a#s1",
      sessionId: "s1",
      participants: {
        "Andrew Joseph|1696934501000": { name: "Andrew Joseph", joinedAt: 1696934501000 },
        "George Alan|1696934501000": { name: "George Alan", joinedAt: 1696934501000 },
      },
    };
    expect(redactValue(session, { ...ANDREW, sessions: ["s1"] })).toEqual({
      pk: "a#s1",
      sessionId: "s1",
      participants: {
        [`${ANDREW.pseudonym}|1696934501000`]: { name: ANDREW.pseudonym, joinedAt: 1696934501000 },
        "George Alan|1696934501000": { name: "George Alan", joinedAt: 1696934501000 },
      },
    });
  });

  it("stamps a redacted archive line with the erasure, and leaves other apps' and other users' lines byte for byte", () => {
    const line = (appId: string, body: object) =>
      JSON.stringify({
        eventId: "e",
        receivedAt: 1,
        trigger: "message_sent",
        appId,
        body: JSON.stringify(body),
        naturalKey: `${appId}|message_sent|1`,
      });
    const mine = line("a", fixture("message_sent"));
    const otherApp = line("b", fixture("message_sent"));
    const other = line("a", { data: { sender: "cometchat-uid-2", text: "hi" } });
    const ndjson = `${mine}\n${otherApp}\n${other}\n`;

    const { text, redacted } = redactNdjson(ndjson, "a", ANDREW);

    expect(redacted).toBe(1);
    const [first, second, third, end] = text.split("\n");
    expect(JSON.parse(first ?? "")).toMatchObject({ eventId: "e", erasure: "e-1" });
    expect([second, third, end]).toEqual([otherApp, other, ""]);
    expect(redactArchiveLine(mine.replace('"appId":"a"', '"appId":"c"'), "a", ANDREW)).toBeUndefined();
  });

  it("changes nothing of a payload that does not name the user (fast-check over JSON values)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value) ?? "";
        fc.pre(!text.includes("cometchat-uid-1") && !text.includes("Andrew Joseph"));
        expect(redactValue(value, ANDREW)).toEqual(value);
      }),
    );
  });

  it("is idempotent: redacting a redacted payload changes nothing (fast-check over the examples and pseudonyms)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...EXAMPLES), fc.stringMatching(/^[0-9a-f]{16}$/), (name, hex) => {
        const r = { ...ANDREW, pseudonym: `erased-${hex}` };
        const once = redactBody(example(name), r);
        expect(redactBody(once, r)).toBe(once);
      }),
    );
  });

  describe("a name is an identifier only where the schema says it names a person (#40, item 4)", () => {
    const line = (body: object, naturalKey?: string) =>
      JSON.stringify({
        eventId: "e",
        receivedAt: 1,
        trigger: "t",
        appId: "a",
        body: JSON.stringify(body),
        naturalKey,
      });
    /** The sample message (from uid-1 to uid-2) as one from `sender` to `receiver`, saying `text`. */
    const between = (sender: string, receiver: string, text: string) => {
      const sent = JSON.parse(
        JSON.stringify(fixture("message_sent"))
          .replaceAll("cometchat-uid-1", "<sender>")
          .replaceAll("cometchat-uid-2", "<receiver>")
          .replaceAll("<sender>", sender)
          .replaceAll("<receiver>", receiver),
      );
      sent.data.message.data.text = text;
      return sent;
    };

    it("a user named Thanks: another pair's message saying Thanks is left byte for byte; their own stint on a call is renamed", () => {
      const thanks: Redaction = { ...ANDREW, names: ["Thanks"] };
      const others = line(between("cometchat-uid-2", "cometchat-uid-3", "Thanks"));
      expect(redactArchiveLine(others, "a", thanks)).toBeUndefined();
      const call = fixture("call_ended");
      call.data.all_occupants[1].name = "Thanks";
      const redacted = redactValue(call, { ...thanks, sessions: [call.data.sessionId] }) as typeof call;
      expect(redacted.data.all_occupants.map((o: { name: string }) => o.name)).toEqual([
        "George Alan",
        thanks.pseudonym,
      ]);
    });

    it("a user named user: receiverType stays user in their own message, and a body that is not JSON is kept", () => {
      const named: Redaction = { ...ANDREW, names: ["user"] };
      const own = between(ANDREW.uid, "cometchat-uid-2", "hi");
      const redacted = JSON.parse(JSON.parse(redactArchiveLine(line(own), "a", named) ?? "{}").body);
      expect(redacted.data.message.receiverType).toBe("user");
      expect(redacted.data.message.sender).toBe(named.pseudonym);
      expect(redactBody("not json: the user left", named)).toBe("not json: the user left");
      expect(redactBody(`not json: ${ANDREW.uid} left`, named)).toBe("");
    });

    it("a group or another user's entity keeps a name the user shares", () => {
      const group = { pk: "a#g1", name: "Andrew Joseph", owner: ANDREW.uid, updatedBy: "cometchat-uid-2" };
      expect(redactValue(group, ANDREW)).toEqual({ ...group, owner: ANDREW.pseudonym });
      const other = { members: { "cometchat-uid-2": { uid: "cometchat-uid-2", name: "Andrew Joseph" } } };
      expect(redactValue(other, ANDREW)).toEqual(other);
    });

    it("an occupant's line: its natural key names the pseudonym where the body did the user, one to one", () => {
      const joined = fixture("call_participant_joined");
      const key = `a|call_participant_joined|s1|${encodeURIComponent("Andrew Joseph")}|1696934573|`;
      const tied = { ...ANDREW, sessions: [joined.data.sessionId] };
      const redacted = JSON.parse(redactArchiveLine(line(joined, key), "a", tied) ?? "{}");
      expect(redacted.naturalKey).toBe(`a|call_participant_joined|s1|${ANDREW.pseudonym}|1696934573|`);
      const someoneElse = fixture("call_participant_joined");
      someoneElse.data.occupant.name = "George Alan";
      const kept = `a|call_participant_joined|s1|${encodeURIComponent("George Alan")}|1696934573|`;
      expect(redactArchiveLine(line(someoneElse, kept), "a", tied)).toBeUndefined();
    });
  });

  it("erases a table item: the user's own deleted, one naming them redacted in every field (runner-up versions and seen events too), another left", () => {
    const group = {
      pk: "a#g1",
      owner: ANDREW.uid,
      versions: { info: "1.0mm7p707k" },
      seen: { "0f1e2d3c4b5a6978": 1 },
      fallback: { info: { v: "0lnk61l4o", f: { owner: ANDREW.uid, name: "Hiking Group" } } },
      rev: 4,
    };
    expect(itemErasure("groups", group, ANDREW)).toEqual({
      ...group,
      owner: ANDREW.pseudonym,
      fallback: { info: { v: "0lnk61l4o", f: { owner: ANDREW.pseudonym, name: "Hiking Group" } } },
    });
    expect(itemErasure("presence", { pk: `a#${ANDREW.uid}`, uid: ANDREW.uid }, ANDREW)).toBeNull();
    expect(itemErasure("memberships", { pk: "a#g1", uid: ANDREW.uid }, ANDREW)).toBeNull();
    expect(
      itemErasure("memberships", { pk: "a#g1", uid: "cometchat-uid-2", by: ANDREW.uid }, ANDREW),
    ).toEqual({
      pk: "a#g1",
      uid: "cometchat-uid-2",
      by: ANDREW.pseudonym,
    });
    expect(
      itemErasure("memberships", { pk: "a#g1", uid: "cometchat-uid-2", by: "cometchat-uid-3" }, ANDREW),
    ).toBeUndefined();
  });

  it("finds the groups and sessions a payload names", () => {
    expect(referencesOf(fixture("group_member_joined"))).toEqual({
      groups: ["cometchat-guid-1"],
      sessions: [],
    });
    expect(referencesOf(fixture("call_ended")).sessions).toHaveLength(1);
  });
});

describe("old versions of the versioned bucket", () => {
  /** A stub S3 client: S3's versions cannot be produced by fauxqs, which keeps none. */
  function stubS3(pages: Array<Partial<ListObjectVersionsCommandOutput>>) {
    const deleted: Array<{ Key?: string; VersionId?: string }> = [];
    let page = 0;
    const client = {
      async send(command: object) {
        if (command instanceof ListObjectVersionsCommand) return pages[page++] ?? {};
        if (command instanceof DeleteObjectsCommand) {
          deleted.push(...(command.input.Delete?.Objects ?? []));
          return {};
        }
        throw new Error(`unexpected ${command.constructor.name}`);
      },
    };
    return { s3: client as unknown as S3Client, deleted };
  }

  it("deletes every version but the current one, delete markers too, following the pages; with exact, only the key", async () => {
    const { s3, deleted } = stubS3([
      {
        IsTruncated: true,
        NextKeyMarker: "k",
        NextVersionIdMarker: "v2",
        Versions: [
          { Key: "k", VersionId: "v3", IsLatest: true },
          { Key: "k", VersionId: "v2", IsLatest: false },
          { Key: "k.old", VersionId: "x1", IsLatest: false },
        ],
      },
      {
        Versions: [{ Key: "k", VersionId: "v1", IsLatest: false }],
        DeleteMarkers: [{ Key: "k", VersionId: "m1", IsLatest: false }],
      },
    ]);

    const n = await s3ObjectVersions(s3, "b").purge("k", { exact: true });

    expect(n).toBe(3);
    expect(deleted).toEqual([
      { Key: "k", VersionId: "v2" },
      { Key: "k", VersionId: "v1" },
      { Key: "k", VersionId: "m1" },
    ]);
  });

  it("with all, deletes the current version too (an object erased outright)", async () => {
    const { s3, deleted } = stubS3([{ Versions: [{ Key: "r", VersionId: "v1", IsLatest: true }] }]);
    expect(await s3ObjectVersions(s3, "b").purge("r", { all: true })).toBe(1);
    expect(deleted).toEqual([{ Key: "r", VersionId: "v1" }]);
  });
});
