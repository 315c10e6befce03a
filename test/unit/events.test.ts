import {
  actorOf,
  conversationUids,
  groupOf,
  isGroupEvent,
  isMembershipEvent,
  isSessionEvent,
  membersOf,
  messageChangeOf,
  receiptOf,
  sessionIdOf,
} from "@webhook-backend/stream/events/accessors";
import { dedupeKey, naturalKey } from "@webhook-backend/stream/events/dedupe";
import { eventTime } from "@webhook-backend/stream/events/event-time";
import { KNOWN_TRIGGERS, type KnownEvent, parseWebhookEvent } from "@webhook-backend/stream/events/schemas";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  allFixtures,
  fixture,
  fixtureText,
  type Loose,
  observedLiveFixtures,
  publishedExamples,
} from "../support/fixtures";

function known(value: unknown): KnownEvent {
  const parsed = parseWebhookEvent(value);
  if (parsed.kind !== "known") throw new Error(`expected a known event, got ${JSON.stringify(parsed)}`);
  return parsed.event;
}

const SPEC_TRIGGERS: string[] = [
  "message_sent",
  "message_edited",
  "message_deleted",
  "message_reaction_added",
  "message_reaction_removed",
  "user_blocked",
  "user_unblocked",
  "group_created",
  "group_updated",
  "group_deleted",
  "group_member_joined",
  "group_member_left",
  "group_member_added",
  "group_member_kicked",
  "group_member_banned",
  "group_member_unbanned",
  "group_member_scope_changed",
  "group_owner_transferred",
  "user_connection_status_changed",
  "message_delivery_receipt",
  "message_read_receipt",
  "call_initiated",
  "call_started",
  "call_participant_joined",
  "call_participant_left",
  "call_ended",
  "meeting_started",
  "meeting_participant_joined",
  "meeting_participant_left",
  "meeting_ended",
  "recording_generated",
  "user_mentioned",
];

describe("schemas: fixtures", () => {
  it("model the 31 listed triggers, user_mentioned and the four call outcomes", () => {
    expect(SPEC_TRIGGERS).toHaveLength(32);
    for (const trigger of [
      ...SPEC_TRIGGERS,
      "call_busy",
      "call_cancelled",
      "call_rejected",
      "call_unanswered",
    ])
      expect(KNOWN_TRIGGERS.has(trigger), trigger).toBe(true);
    const covered = new Set(allFixtures().map((f) => f.trigger));
    for (const trigger of KNOWN_TRIGGERS) expect(covered.has(trigger), `fixture for ${trigger}`).toBe(true);
  });

  it.each(allFixtures())("$name parses as $trigger and round-trips", ({ name, trigger }) => {
    const input = fixture(name);
    const event = known(input);
    expect(event.trigger).toBe(trigger);
    expect(JSON.parse(JSON.stringify(event))).toEqual(input);
  });
});

describe("schemas: the platform's published examples", () => {
  it.each(publishedExamples())("$file parses as its trigger and round-trips", ({ file, json }) => {
    const event = known(json);
    expect(event.trigger).toBe(file.replace(/(-\d)?\.json$/, ""));
    expect(JSON.parse(JSON.stringify(event))).toEqual(json);
  });

  it("cover every trigger of the spec", () => {
    const triggers = new Set<string>(publishedExamples().map((e) => known(e.json).trigger));
    for (const trigger of SPEC_TRIGGERS) expect(triggers.has(trigger), trigger).toBe(true);
  });

  const calls = new Set([
    "call_busy",
    "call_cancelled",
    "call_rejected",
    "call_unanswered",
    // Beyond the spec, modelled since #30 (the rest: campaigns, feeds, push, moderation_engine_failed).
    "message_delivered_to_all",
    "message_read_by_all",
    "moderation_engine_blocked",
    "moderation_engine_approved",
    "moderation_manual_approved",
    "transcription_generated",
  ]);
  it.each(publishedExamples("other-triggers"))(
    "other trigger $file: call outcomes and the triggers modelled beyond the spec known, the rest unknown",
    ({ file, json }) => {
      const parsed = parseWebhookEvent(json);
      const trigger = file.replace(/(-\d)?\.json$/, "");
      expect(parsed.kind).toBe(calls.has(trigger) ? "known" : "unknown");
    },
  );

  it.each(publishedExamples("legacy"))(
    "legacy $file: receipts known (legacy format), the legacy-only triggers unknown (archived)",
    ({ file, json }) => {
      // Before #30 the legacy receipts were quarantined as invalid.
      const parsed = parseWebhookEvent(json);
      const receipt = /^message_(delivery|read)_receipt/.test(file);
      expect(parsed.kind).toBe(receipt ? "known" : "unknown");
      if (
        parsed.kind === "known" &&
        (parsed.event.trigger === "message_read_receipt" ||
          parsed.event.trigger === "message_delivery_receipt")
      ) {
        const r = receiptOf(parsed.event);
        expect([r.format, r.messageId, r.uid, r.at?.ms]).toEqual([
          "legacy",
          "MESSAGE_ID",
          "receiptSenderUID",
          1673017183000,
        ]);
        expect(naturalKey(parsed.event)).toBe(
          `167*****1529|${parsed.event.trigger}|legacy|MESSAGE_ID|receiptSenderUID`,
        );
        expect(actorOf(parsed.event)).toBe("receiptSenderUID");
      }
    },
  );

  it("reads a legacy receipt's millisecond string time as milliseconds", () => {
    const legacy = publishedExamples("legacy").find((e) => e.file === "message_read_receipt-3.json")
      ?.json as Loose;
    const event = known({ ...legacy, data: { ...legacy.data, readAt: "1673017183123" } });
    expect(eventTime(event, 0)).toEqual({ ms: 1673017183123, source: "data.readAt" });
  });
});

/** Paths the spec is certain about, per trigger: each must be present and of its type. */
const REQUIRED_PATHS: Record<string, string[][]> = {
  message_sent: [["data", "message", "id"], ["data", "message", "sentAt"], ["appId"]],
  // Without `data.action` an edit is the live layout (the message itself), which needs only its id.
  message_edited: [
    ["data", "message", "data", "entities", "on", "entity", "id"],
    ["data", "message", "id"],
  ],
  message_deleted: [["data", "message", "data", "entities", "by", "entity", "uid"]],
  message_reaction_added: [
    ["data", "reaction", "messageId"],
    ["data", "reaction", "reactedAt"],
  ],
  message_reaction_removed: [["data", "reaction", "uid"]],
  user_blocked: [["data", "by", "uid"]],
  user_unblocked: [["data", "users"]],
  group_created: [
    ["data", "group", "guid"],
    ["data", "group", "createdAt"],
    ["data", "members"],
  ],
  group_updated: [["data", "group", "membersCount"]],
  group_deleted: [["data", "group", "guid"]],
  group_member_joined: [["data", "members"]],
  // A membership event needs its group's guid only (a slim group is kept as it came).
  group_member_left: [["data", "group", "guid"]],
  group_member_added: [["data", "by"]],
  group_member_kicked: [["data", "by", "uid"]],
  group_member_banned: [["data", "group", "guid"]],
  group_member_unbanned: [["data", "members"]],
  group_member_scope_changed: [["data", "members", "cometchat-uid-2", "scope"]],
  group_owner_transferred: [["data", "group", "owner"]],
  user_connection_status_changed: [
    ["data", "timestamp"],
    ["data", "user", "uid"],
    ["data", "currentConnection", "connectedAt"],
  ],
  message_delivery_receipt: [
    ["data", "body", "messageId"],
    ["data", "body", "timestamp"],
  ],
  message_read_receipt: [["data", "body", "user", "uid"]],
  call_initiated: [
    ["data", "call", "sentAt"],
    ["data", "call", "id"],
  ],
  call_started: [["data", "sessionId"], ["data", "created_at"], ["type"]],
  call_participant_joined: [
    ["data", "occupant", "joined_at"],
    ["data", "occupant", "audio_call"],
  ],
  call_participant_left: [
    ["data", "occupant", "left_at"],
    ["data", "occupant", "name"],
  ],
  call_ended: [
    ["data", "all_occupants"],
    ["data", "destroyed_at"],
  ],
  meeting_started: [["data", "sessionId"]],
  meeting_participant_joined: [["data", "occupant", "name"]],
  meeting_participant_left: [["data", "occupant", "left_at"]],
  meeting_ended: [["data", "created_at"]],
  recording_generated: [
    ["data", "recording_url"],
    ["data", "startTime"],
    ["data", "duration"],
  ],
  user_mentioned: [["data", "message", "sender"]],
  call_busy: [["data", "call", "data", "action"]],
  call_cancelled: [["data", "call", "conversationId"]],
  call_rejected: [["data", "call", "sentAt"]],
  call_unanswered: [["data", "call", "receiver"]],
};

function setPath(root: Record<string, unknown>, path: string[], value: unknown | typeof REMOVE): void {
  let node = root as Record<string, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path[path.length - 1] as string;
  if (value === REMOVE) delete node[last];
  else node[last] = value;
}
const REMOVE = Symbol("remove");

function getPath(root: unknown, path: string[]): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], root);
}

/** A value of another JSON type than `current`. */
const wrongTypeFor = (current: unknown) =>
  fc
    .oneof(
      fc.constant<unknown>(REMOVE),
      fc.constant<unknown>(null),
      fc.boolean(),
      fc.integer(),
      fc.string(),
      fc.constant<unknown>([]),
      fc.constant<unknown>({ unexpected: true }),
    )
    .filter((v) => {
      if (v === REMOVE) return true;
      if (typeof current === "number") return typeof v !== "number";
      if (typeof current === "string") return typeof v !== "string";
      if (Array.isArray(current)) return !Array.isArray(v);
      if (typeof current === "object") return v === null || typeof v !== "object";
      return typeof v !== typeof current;
    });

describe("schemas: rejections name the trigger and the failing path", () => {
  it.each(Object.entries(REQUIRED_PATHS))(
    "%s: a missing or mistyped required field is rejected",
    (trigger, paths) => {
      fc.assert(
        fc.property(
          fc
            .constantFrom(...paths)
            .chain((path) => fc.tuple(fc.constant(path), wrongTypeFor(getPath(fixture(trigger), path)))),
          ([path, value]) => {
            const input = fixture(trigger);
            setPath(input, path, value);
            const parsed = parseWebhookEvent(input);
            expect(parsed.kind).toBe("invalid");
            if (parsed.kind === "invalid") expect(parsed.error).toContain(`${trigger}: ${path.join(".")}`);
          },
        ),
        { numRuns: 40 },
      );
    },
  );

  it("reports a member's scope by its path", () => {
    const input = fixture<{ data: { members: Record<string, Record<string, unknown>> } }>(
      "group_member_scope_changed",
    );
    delete input.data.members["cometchat-uid-2"]?.scope;
    const parsed = parseWebhookEvent(input);
    expect(parsed.kind === "invalid" && parsed.error).toBe(
      "group_member_scope_changed: data.members.cometchat-uid-2.scope: Invalid input: expected string, received undefined",
    );
  });

  it("catches seconds in the presence event's millisecond timestamp, and milliseconds in a seconds field", () => {
    const presence = fixture<{ data: { timestamp: number } }>("user_connection_status_changed");
    presence.data.timestamp = Math.floor(presence.data.timestamp / 1000);
    const group = fixture<{ data: { group: { createdAt: number } } }>("group_created");
    group.data.group.createdAt *= 1000;
    const a = parseWebhookEvent(presence);
    const b = parseWebhookEvent(group);
    expect(a.kind === "invalid" && a.error).toContain(
      "user_connection_status_changed: data.timestamp: expected epoch milliseconds",
    );
    expect(b.kind === "invalid" && b.error).toContain(
      "group_created: data.group.createdAt: expected epoch seconds",
    );
    // Beyond what a date holds: refused (quarantined), not a batch that fails to archive.
    presence.data.timestamp = 9e15;
    const c = parseWebhookEvent(presence);
    expect(c.kind === "invalid" && c.error).toContain(
      "user_connection_status_changed: data.timestamp: expected epoch milliseconds within a date's range",
    );
  });

  it("refuses boolean audio_call (the platform sends strings)", () => {
    const input = fixture<{ data: { occupant: Record<string, unknown> } }>("call_participant_joined");
    input.data.occupant.audio_call = true;
    const parsed = parseWebhookEvent(input);
    expect(parsed.kind === "invalid" && parsed.error).toContain(
      "call_participant_joined: data.occupant.audio_call",
    );
  });

  it("refuses a session event whose type does not match its trigger", () => {
    const input = fixture("meeting_started");
    input.type = "call";
    expect(parseWebhookEvent(input).kind).toBe("invalid");
  });

  it("refuses a body that is not an object", () => {
    expect(parseWebhookEvent([1, 2]).kind).toBe("invalid");
    expect(parseWebhookEvent("x").kind).toBe("invalid");
  });
});

describe("schemas: tolerance", () => {
  it("accepts an unknown trigger, keeping the envelope", () => {
    const parsed = parseWebhookEvent({ trigger: "after_feed_item_read", appId: "a", data: { x: 1 } });
    expect(parsed).toEqual({
      kind: "unknown",
      trigger: "after_feed_item_read",
      envelope: { trigger: "after_feed_item_read", appId: "a", data: { x: 1 } },
    });
  });

  it("passes extra fields through untouched, at every level", () => {
    const input = fixture<Loose>("group_member_added");
    input.newTopLevel = { a: 1 };
    input.data.group.tags = ["hiking"];
    input.data.members["cometchat-uid-2"].metadata = { plan: "pro" };
    expect(JSON.parse(JSON.stringify(known(input)))).toEqual(input);
  });

  it("accepts newer enumeration values (status, scope, type, platform, region)", () => {
    const input = fixture<Loose>("group_member_scope_changed");
    input.region = "ap";
    input.data.group.type = "password";
    input.data.members["cometchat-uid-2"].scope = "moderator";
    input.data.members["cometchat-uid-2"].status = "away";
    expect(known(input).trigger).toBe("group_member_scope_changed");
    const presence = fixture<Loose>("user_connection_status_changed");
    presence.data.currentConnection.action = "reconnected";
    presence.data.currentConnection.platform = "visionos";
    expect(known(presence).trigger).toBe("user_connection_status_changed");
  });
});

const EXPECTED_TIME_SOURCE: Record<string, string> = {
  message_sent: "data.message.sentAt",
  message_edited: "data.message.data.entities.on.entity.editedAt",
  message_deleted: "data.message.data.entities.on.entity.deletedAt",
  "observed-live/message_edited.live": "data.message.editedAt",
  "observed-live/message_edited.live-without-editedAt": "data.message.updatedAt",
  "observed-live/message_edited.live-bare": "receivedAt",
  "observed-live/message_deleted.live": "data.message.deletedAt",
  "observed-live/message_delivered_to_all.live": "receivedAt",
  "observed-live/message_read_by_all.live": "receivedAt",
  message_reaction_added: "data.reaction.reactedAt",
  message_reaction_removed: "data.reaction.reactedAt",
  user_blocked: "receivedAt",
  user_unblocked: "receivedAt",
  group_created: "data.group.createdAt",
  group_updated: "data.group.updatedAt",
  "group_updated.without-updatedAt": "receivedAt",
  group_deleted: "data.group.updatedAt",
  group_owner_transferred: "data.group.updatedAt",
  group_member_joined: "receivedAt",
  group_member_left: "receivedAt",
  group_member_added: "receivedAt",
  group_member_kicked: "receivedAt",
  group_member_banned: "receivedAt",
  group_member_unbanned: "receivedAt",
  group_member_scope_changed: "receivedAt",
  user_connection_status_changed: "data.timestamp (ms)",
  message_delivery_receipt: "data.body.timestamp",
  message_read_receipt: "data.body.timestamp",
  call_initiated: "data.call.sentAt",
  call_started: "data.created_at",
  call_participant_joined: "data.occupant.joined_at",
  call_participant_left: "data.occupant.left_at",
  call_ended: "data.destroyed_at",
  meeting_started: "data.created_at",
  meeting_participant_joined: "data.occupant.joined_at",
  meeting_participant_left: "data.occupant.left_at",
  meeting_ended: "data.destroyed_at",
  recording_generated: "data.startTime",
  user_mentioned: "data.message.sentAt",
  call_busy: "data.call.sentAt",
  call_cancelled: "data.call.sentAt",
  call_rejected: "data.call.sentAt",
  call_unanswered: "data.call.sentAt",
  message_delivered_to_all: "data.body.timestamp",
  message_read_by_all: "data.body.timestamp",
  moderation_engine_blocked: "data.message.sentAt",
  moderation_engine_approved: "data.message.sentAt",
  moderation_manual_approved: "receivedAt",
  transcription_generated: "data.startTime",
};

describe("event time", () => {
  const RECEIVED = 1_700_000_000_123;
  it.each(allFixtures())("$name: from the documented field, in ms", ({ name, trigger }) => {
    const event = known(fixture(name));
    const time = eventTime(event, RECEIVED);
    const source = EXPECTED_TIME_SOURCE[name] ?? EXPECTED_TIME_SOURCE[trigger];
    expect(time.source).toBe(source);
    if (source === "receivedAt") expect(time.ms).toBe(RECEIVED);
    else {
      // The fixtures' payload times are in 2023-2025: seconds read as ms would be in 1970.
      expect(time.ms).toBeGreaterThan(Date.UTC(2023, 0, 1));
      expect(time.ms).toBeLessThan(Date.UTC(2026, 0, 1));
    }
  });

  it("keeps the presence event's milliseconds as they are", () => {
    expect(eventTime(known(fixture("user_connection_status_changed")), RECEIVED).ms).toBe(1696935103114);
  });

  it("uses receivedAt for an unknown trigger", () => {
    expect(eventTime(undefined, RECEIVED)).toEqual({ ms: RECEIVED, source: "receivedAt" });
  });
});

describe("dedupe keys", () => {
  it.each(allFixtures())("$name: a redelivery with other whitespace has the same keys", ({ name }) => {
    const compact = JSON.stringify(JSON.parse(fixtureText(name)));
    const a = known(JSON.parse(fixtureText(name)));
    const b = known(JSON.parse(compact));
    expect(naturalKey(a)).toBe(naturalKey(b));
    expect(dedupeKey(a, "hash")).toBe(dedupeKey(b, "hash"));
    expect(dedupeKey(a, "hash").startsWith("2598234fa1e3b9c|")).toBe(true);
  });

  it("tells a join, a leave and a second join of the same occupant apart", () => {
    const join = known(fixture("call_participant_joined"));
    const leave = fixture<Loose>("call_participant_left");
    leave.data.occupant.name = "Andrew Joseph";
    leave.data.occupant.joined_at = 1696934573;
    leave.data.occupant.left_at = 1696934600;
    const rejoin = fixture<Loose>("call_participant_joined");
    rejoin.data.occupant.joined_at = 1696934650;
    const keys = [join, known(leave), known(rejoin)].map(naturalKey);
    expect(new Set(keys).size).toBe(3);
  });

  it("recognises the same recording delivered with another URL signature", () => {
    const a = fixture<Loose>("recording_generated");
    const b = structuredClone(a);
    b.data.recording_url = `${b.data.recording_url}&X-Amz-Date=other`;
    expect(naturalKey(known(a))).toBe(naturalKey(known(b)));
  });

  it("has no natural key where the payload cannot tell occurrences apart: the body hash decides", () => {
    const kicked = known(fixture("group_member_kicked"));
    expect(naturalKey(kicked)).toBeUndefined();
    expect(dedupeKey(kicked, "abc")).toBe("2598234fa1e3b9c|group_member_kicked|body:abc");
  });

  it("separates apps", () => {
    const a = fixture("message_sent");
    const b = fixture("message_sent");
    b.appId = "other-app";
    expect(naturalKey(known(a))).not.toBe(naturalKey(known(b)));
  });
});

describe("accessors", () => {
  it("find the group, the members and the actor of group events", () => {
    const event = known(fixture("group_member_added"));
    if (!isGroupEvent(event) || !isMembershipEvent(event)) throw new Error("not a membership event");
    expect(groupOf(event).guid).toBe("cometchat-guid-1");
    expect(membersOf(event).map((m) => m.uid)).toEqual(["cometchat-uid-2"]);
    expect(actorOf(event)).toBe("cometchat-uid-1");
  });

  it("find the session id of every session event, including call_initiated's lower-case sessionid", () => {
    for (const { name, trigger } of allFixtures()) {
      const event = known(fixture(name));
      if (!isSessionEvent(event)) continue;
      const expected =
        name === "call_initiated.without-entities" ? undefined : expect.stringMatching(/^v1\./);
      expect(sessionIdOf(event), `${name} (${trigger})`).toEqual(expected);
    }
  });

  it("split a one-to-one conversation id into its two uids", () => {
    expect(conversationUids("cometchat-uid-1_user_cometchat-uid-5")).toEqual([
      "cometchat-uid-1",
      "cometchat-uid-5",
    ]);
    expect(conversationUids("group_cometchat-guid-1")).toBeUndefined();
    expect(conversationUids("_user_x")).toBeUndefined();
    expect(conversationUids("x_user_")).toBeUndefined();
  });
});

describe("edits and deletes as live deliveries carry them (observed by the platform's QA suite)", () => {
  /** The published layout of the live fixture's edit: an action message about message 101. */
  function publishedEditOf(live: Loose): Loose {
    const published = fixture("message_edited");
    Object.assign(published.data.message.data.entities.on.entity, {
      id: live.data.message.id,
      editedAt: live.data.message.editedAt,
      editedBy: live.data.message.editedBy,
    });
    published.data.message.data.entities.by.entity.uid = live.data.message.editedBy;
    return published;
  }

  it.each(observedLiveFixtures())("$name is accepted as $trigger", ({ name, trigger }) => {
    // Before: `data.message.data.action: expected "edited"`, `entities.by … received undefined`.
    expect(known(fixture(name)).trigger).toBe(trigger);
  });

  it("reads the original message's id, the edit time and the editor in both layouts: one fact", () => {
    const live = fixture("observed-live/message_edited.live");
    const [a, b] = [known(live), known(publishedEditOf(live))];
    const changes = [a, b].map((e) => (e.trigger === "message_edited" ? messageChangeOf(e) : undefined));
    expect(changes.map((c) => [c?.layout, c?.messageId, c?.at?.seconds, c?.by])).toEqual([
      ["message", "101", 1756990060, "qa-user-1"],
      ["action", "101", 1756990060, "qa-user-1"],
    ]);
    expect(naturalKey(a)).toBe("2598234fa1e3b9c|message_edited|101|1756990060");
    expect(naturalKey(b)).toBe(naturalKey(a));
    expect(eventTime(a, 0)).toEqual({ ms: 1756990060000, source: "data.message.editedAt" });
    expect(actorOf(a)).toBe("qa-user-1");
  });

  it("keys two edits of one message as two facts, and times each by its edit, not by sentAt", () => {
    const first = fixture("observed-live/message_edited.live");
    const second = fixture("observed-live/message_edited.live");
    Object.assign(second.data.message, { editedAt: 1757076460, updatedAt: 1757076460 });
    second.data.message.data.text = "edited a day later";
    const [a, b] = [known(first), known(second)];
    expect(naturalKey(a)).not.toBe(naturalKey(b));
    expect(new Date(eventTime(b, 0).ms).toISOString().slice(0, 10)).toBe("2025-09-05");
    expect(new Date(first.data.message.sentAt * 1000).toISOString().slice(0, 10)).toBe("2025-09-04");
  });

  it("falls back to updatedAt, then to the receipt (keyed by the body) when the payload has no time", () => {
    const updated = known(fixture("observed-live/message_edited.live-without-editedAt"));
    expect(eventTime(updated, 5).source).toBe("data.message.updatedAt");
    expect(actorOf(updated)).toBe("qa-user-1");
    const bare = known(fixture("observed-live/message_edited.live-bare"));
    expect(eventTime(bare, 5)).toEqual({ ms: 5, source: "receivedAt" });
    expect(naturalKey(bare)).toBeUndefined();
    expect(dedupeKey(bare, "hash")).toBe("2598234fa1e3b9c|message_edited|body:hash");
  });

  it("keys and times a live delete by the original message and its deletedAt", () => {
    const deleted = known(fixture("observed-live/message_deleted.live"));
    expect(naturalKey(deleted)).toBe("2598234fa1e3b9c|message_deleted|101|1756990200");
    expect(eventTime(deleted, 0).source).toBe("data.message.deletedAt");
    expect(actorOf(deleted)).toBe("qa-user-1");
  });

  it("still refuses an action message without its entities, naming both layouts' reasons", () => {
    const broken = fixture("message_edited");
    delete broken.data.message.data.entities.by;
    const parsed = parseWebhookEvent(broken);
    expect(parsed.kind).toBe("invalid");
    if (parsed.kind === "invalid") {
      expect(parsed.error).toContain("message_edited: data.message.data.entities.by");
      expect(parsed.error).toContain("message_edited: data.message.data.action");
    }
  });
});
