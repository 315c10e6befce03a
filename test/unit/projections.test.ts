import { createHash } from "node:crypto";
import { factFields } from "@webhook-backend/stream";
import type { GroupEvent, MembershipEvent, SessionEvent } from "@webhook-backend/stream/events/accessors";
import type { EventOf } from "@webhook-backend/stream/events/schemas";
import { evolveOnce } from "@webhook-backend/stream/fold";
import { evolveGroup, groupsProjection } from "@webhook-backend/stream/projections/groups";
import {
  evolveMembership,
  type MembershipState,
  membershipsProjection,
} from "@webhook-backend/stream/projections/memberships";
import {
  evolvePresence,
  type PresenceState,
  presenceProjection,
} from "@webhook-backend/stream/projections/presence";
import {
  applyRecordingOutcome,
  evolveSession,
  type SessionState,
  sessionsProjection,
} from "@webhook-backend/stream/projections/sessions";
import type { Projection, ProjectionInput } from "@webhook-backend/stream/projections/types";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { observability } from "../../shared/platform/observability";
import { TRIGGER_METRICS } from "../../shared/platform/outcomes";
import { projectSqsBatch } from "../../shared/projector/batch";
import { projectBatch, projectKnownEvent } from "../../shared/projector/core";
import { archiveLine } from "../../shared/projector/raw-archive";
import { ingestRecordFor, sqsEvent } from "../../tools/local/sqs-event";
import { expectedActivity } from "../../tools/simulate/expected-activity";
import { fixture, type Loose } from "../support/fixtures";
import { inputOf, memoryDeps, memoryStores } from "../support/projection";
import { spec } from "../support/projection-spec";

const APP = "2598234fa1e3b9c";
const T0 = 1_696_930_000_000;

function groupEvent(name: string, mutate: (e: Loose) => void = () => {}, receivedAt = T0, eventId = name) {
  const e = fixture(name);
  mutate(e);
  return inputOf(e, receivedAt, eventId) as ProjectionInput<GroupEvent>;
}

describe("groups", () => {
  const created = () => groupEvent("group_created");
  const updated = (updatedAt: number, name: string) =>
    groupEvent("group_updated", (e) => Object.assign(e.data.group, { updatedAt, name }), T0, `u${updatedAt}`);
  const deleted = (updatedAt: number) =>
    groupEvent(
      "group_deleted",
      (e) => Object.assign(e.data.group, { updatedAt, guid: "cometchat-guid-1" }),
      T0,
      `d${updatedAt}`,
    );

  it("group_created makes the group", () => {
    const state = evolveGroup(null, created());
    expect(state).toMatchObject({
      pk: `${APP}#cometchat-guid-1`,
      guid: "cometchat-guid-1",
      name: "Hiking Group",
      owner: "cometchat-uid-1",
      membersCount: 1,
      createdAt: 1696932915,
      deleted: false,
    });
  });

  it("a newer update wins, an older one is stale", () => {
    const a = evolveGroup(evolveGroup(null, created()), updated(1696933000, "New name"));
    expect(a.name).toBe("New name");
    expect(evolveGroup(a, updated(1696932990, "Old name"))).toEqual(a);
  });

  it("an update older than the deletion does not resurrect the group; the order does not matter", () => {
    spec(groupsProjection)
      .given(created(), deleted(1696934000))
      .when(updated(1696933000, "Late"))
      .then({ deleted: true, deletedAt: 1696934000 * 1000 });
  });

  it("a membership event received after the deletion does not resurrect it either", () => {
    const kicked = groupEvent("group_member_kicked", () => {}, 1696935000 * 1000, "k");
    spec(groupsProjection)
      .given(created(), deleted(1696934000))
      .when(kicked, { times: 2 })
      .then({ deleted: true });
  });

  it("a group_created newer than a deletion brings the group back", () => {
    const recreated = groupEvent("group_created", (e) => (e.data.group.createdAt = 1696935000), T0, "c2");
    const state = spec(groupsProjection)
      .given(created(), deleted(1696934000))
      .when(recreated)
      .then({ deleted: false });
    expect(state.deletedAt).toBeUndefined();
  });

  it("keeps the previous owner of the latest transfer whatever the order", () => {
    const transfer = groupEvent("group_owner_transferred", (e) => (e.data.group.guid = "cometchat-guid-1"));
    const later = updated(1696934000, "After");
    spec(groupsProjection)
      .given(created(), transfer)
      .when(later, { times: 2 })
      // The owner is the later update's owner field.
      .then({ previousOwner: "cometchat-uid-1", owner: fixture("group_updated").data.group.owner });
  });

  it("takes membersCount as reported by the latest event", () => {
    const added = groupEvent("group_member_added", () => {}, 1696940000 * 1000, "a");
    spec(groupsProjection).given(created()).when(added).then({ membersCount: 2 });
  });
});

describe("memberships", () => {
  const member = (
    name: string,
    receivedAt: number,
    uid = "cometchat-uid-2",
    mutate: (e: Loose) => void = () => {},
  ) => {
    const e = fixture(name);
    const user = Object.values(e.data.members)[0] as Loose;
    e.data.members = { [uid]: { ...user, uid } };
    mutate(e);
    // An event id is the body's hash: a version keeps its first 12 characters.
    const id = createHash("sha256").update(`${name}@${receivedAt}`).digest("hex");
    return inputOf(e, receivedAt, id) as ProjectionInput<MembershipEvent>;
  };
  const apply = (inputs: ProjectionInput<MembershipEvent>[], uid = "cometchat-uid-2") =>
    inputs.reduce<MembershipState | null>((s, i) => evolveMembership(s, i, uid), null) as MembershipState;

  it("group_created makes the creator an admin member", () => {
    spec(membershipsProjection)
      .given()
      .when(inputOf(fixture("group_created")), { times: 2 })
      .then({
        uid: "cometchat-uid-1",
        status: "member",
        scope: "admin",
        joinedAt: 1696932915000,
        by: "cometchat-uid-1",
      });
  });

  it("added, with who acted", () => {
    expect(apply([member("group_member_added", T0)])).toMatchObject({
      status: "member",
      scope: "participant",
      by: "cometchat-uid-1",
      joinedAt: T0,
      userKey: `${APP}#cometchat-uid-2`,
    });
  });

  it("a join older than a leave, arriving after it, does not bring the member back", () => {
    const join = member("group_member_joined", T0);
    const leave = member("group_member_left", T0 + 1000);
    spec(membershipsProjection).given(leave).when(join).then({ status: "left" });
  });

  it.each([
    [["group_member_banned", "group_member_unbanned"], "unbanned"],
    [["group_member_kicked", "group_member_added"], "member"],
    [["group_member_left", "group_member_joined"], "member"],
    [["group_member_added", "group_member_kicked"], "kicked"],
  ])("%j in time order ends %s, whatever the delivery order", (triggers, status) => {
    const inputs = triggers.map((t, i) => member(t, T0 + i * 1000));
    expect(apply(inputs).status).toBe(status);
    expect(apply([...inputs].reverse())).toEqual(apply(inputs));
  });

  it("a scope change holds until the member is re-added", () => {
    const added = member("group_member_added", T0);
    const promoted = member("group_member_scope_changed", T0 + 1000);
    const kicked = member("group_member_kicked", T0 + 2000);
    const readded = member("group_member_added", T0 + 3000);
    expect(apply([promoted, added]).scope).toBe("admin");
    expect(apply([readded, promoted, kicked, added])).toMatchObject({
      status: "member",
      scope: "participant",
    });
  });

  it("a platform retry (same bytes, later receipt) after a kick does not re-add the member", () => {
    const added = member("group_member_added", T0);
    const retry = {
      ...added,
      receivedAt: T0 + 30_000,
      eventTimeMs: T0 + 30_000,
      version: `${T0 + 30_000}`.padStart(15, "0"),
    };
    const kicked = member("group_member_kicked", T0 + 5000);
    const key = { pk: added.event.appId, sk: "cometchat-uid-2" };
    const step = (s: MembershipState | null, i: ProjectionInput) =>
      evolveOnce(membershipsProjection, i as ProjectionInput<MembershipEvent>, key)(s);
    const state = [added, kicked, retry].reduce<MembershipState | null>(step, null);
    expect(state?.status).toBe("kicked");
  });
});

describe("presence", () => {
  const presence = (
    timestamp: number,
    status: "online" | "offline",
    mutate: (e: Loose) => void = () => {},
  ) => {
    const e = fixture("user_connection_status_changed");
    e.data.timestamp = timestamp;
    e.data.status = status;
    e.data.currentConnection.action = status === "online" ? "connected" : "disconnected";
    mutate(e);
    return inputOf(e, timestamp + 500, `p${timestamp}`) as ProjectionInput<
      EventOf<"user_connection_status_changed">
    >;
  };
  const apply = (inputs: ProjectionInput<EventOf<"user_connection_status_changed">>[]) =>
    inputs.reduce<PresenceState | null>((s, i) => evolvePresence(s, i), null) as PresenceState;

  it("online: since, last seen, platform, user agent, app version, and in the online index", () => {
    expect(apply([presence(T0, "online")])).toMatchObject({
      status: "online",
      since: T0,
      lastSeen: T0,
      platform: "javascript",
      appVersion: "3.0.12",
      userAgent: expect.stringContaining("Mozilla"),
      onlineShard: expect.stringMatching(new RegExp(`^${APP}#([0-9]|1[0-5])$`)),
    });
  });

  it("a late, older connect does not undo a disconnect", () => {
    const state = apply([presence(T0 + 1000, "offline"), presence(T0, "online")]);
    expect(state).toMatchObject({ status: "offline", since: T0 + 1000, lastSeen: T0 + 1000 });
    expect(state.onlineShard).toBeUndefined();
  });

  it("since is the last change of presence, not the last event", () => {
    const unchanged = presence(T0 + 5000, "online", (e) => (e.data.userPresenceChanged = false));
    expect(apply([presence(T0, "online"), unchanged])).toMatchObject({ since: T0, lastSeen: T0 + 5000 });
    expect(apply([unchanged, presence(T0, "online")])).toEqual(apply([presence(T0, "online"), unchanged]));
  });
});

describe("sessions", () => {
  const session = (name: string, mutate: (e: Loose) => void = () => {}) => {
    const e = fixture(name);
    mutate(e);
    return inputOf(e, T0, `${name}:${JSON.stringify(e).length}`) as ProjectionInput<SessionEvent>;
  };
  const SID = fixture("call_started").data.sessionId as string;
  const apply = (inputs: ProjectionInput<SessionEvent>[]) =>
    inputs.reduce<SessionState | null>((s, i) => evolveSession(s, i, SID), null) as SessionState;

  it("a roster too large for the item keeps the same earliest stints whatever the order of its reports", () => {
    // Three end reports of 500 long-named stints each: together over SESSION_PARTICIPANTS_MAX_BYTES.
    const report = (part: number) =>
      session("call_ended", (e) => {
        e.data.sessionId = SID;
        e.data.all_occupants = Array.from({ length: 500 }, (_, i) => ({
          joined_at: 1_696_934_500 + ((part * 500 + i) % 700),
          left_at: 1_696_934_553,
          audio_call: "true",
          name: `p${part}-${i}-${"n".repeat(150)}`,
        }));
      });
    const reports = [report(0), report(1), report(2)];
    const states = [
      [0, 1, 2],
      [2, 1, 0],
      [1, 2, 0],
    ].map((order) => apply(order.map((i) => reports[i] as ProjectionInput<SessionEvent>)));
    const [first] = states as [SessionState];
    expect(first.participantsOmitted).toBe(true);
    expect(Object.keys(first.participants).length).toBeLessThan(1500);
    for (const state of states)
      expect(Object.keys(state.participants).sort()).toEqual(Object.keys(first.participants).sort());
  });

  it("follows a call from initiation to end", () => {
    const state = apply([
      session("call_initiated"),
      session("call_started"),
      session("call_participant_joined"),
      session("call_participant_left"),
      session("call_ended"),
    ]);
    expect(state).toMatchObject({
      kind: "call",
      initiator: "cometchat-uid-1",
      receiver: "cometchat-uid-5",
      conversationId: "cometchat-uid-1_user_cometchat-uid-5",
      callType: "audio",
      initiatedAt: 1696934199000,
      outcome: "ended",
      endedAt: 1696934553000,
      startedAt: 1696934501000,
      durationSeconds: 52,
      initiatorKey: `${APP}#cometchat-uid-1`,
      receiverKey: `${APP}#cometchat-uid-5`,
      sessionTime: 1696934199000,
    });
    expect(Object.values(state.participants).filter((p) => p.atEnd)).toHaveLength(2);
    expect(Object.values(state.participants)).toContainEqual({
      name: "Andrew Joseph",
      joinedAt: 1696934573000,
      audioCall: true,
    });
  });

  it("the end is final; a late participant event still fills in participants", () => {
    const ended = apply([session("call_ended")]);
    const late = evolveSession(ended, session("call_participant_joined"), SID);
    expect(late.endedAt).toBe(ended.endedAt);
    expect(Object.keys(late.participants)).toHaveLength(Object.keys(ended.participants).length + 1);
  });

  it("marks the stints the end listed once, in any order, and a late stint stays unmarked", () => {
    const joined = session("call_participant_joined");
    const ended = session("call_ended");
    const marked = (s: ReturnType<typeof apply>) =>
      Object.values(s.participants)
        .filter((p) => p.atEnd)
        .map((p) => `${p.name}|${p.joinedAt}`)
        .sort();
    const endFirst = apply([ended, joined]);
    const endLast = apply([joined, ended]);
    expect(endFirst.participants).toEqual(endLast.participants);
    expect(marked(endFirst)).toHaveLength(2);
    expect(Object.values(endFirst.participants).some((p) => !p.atEnd)).toBe(true);
    expect(endFirst).not.toHaveProperty("finalOccupants");
  });

  it("keeps every stint of a name that joins several times", () => {
    const again = session("call_participant_joined", (e) => (e.data.occupant.joined_at += 100));
    const state = apply([session("call_participant_joined"), again]);
    expect(Object.values(state.participants).map((p) => p.name)).toEqual(["Andrew Joseph", "Andrew Joseph"]);
  });

  it("records a meeting as kind meet", () => {
    const meet = fixture("meeting_started").data.sessionId as string;
    const state = evolveSession(null, session("meeting_started"), meet);
    expect(state.kind).toBe("meet");
  });

  it("records a call outcome", () => {
    const sid = fixture("call_busy").data.call.data.entities.on.entity.sessionid as string;
    expect(evolveSession(null, session("call_busy"), sid).outcome).toBe("busy");
  });

  it("keeps the recording pending, then archived; a later failure report does not undo it", () => {
    const generated = apply([session("recording_generated")]);
    const recording = generated.recordings["1696937627"];
    expect(recording).toMatchObject({
      status: "pending",
      duration: 21.433,
      attempts: 0,
      startTime: 1696937627,
    });
    expect(recording?.sourceUrl).not.toContain("?");
    const archived = applyRecordingOutcome(generated, "1696937627", {
      status: "archived",
      bucket: "b",
      key: "k",
      size: 10,
      sha256: "abc",
      contentType: "video/mp4",
      archivedAt: T0,
      attempt: 1,
    });
    const failedLater = applyRecordingOutcome(archived, "1696937627", {
      status: "failed",
      reason: "timeout",
      attempt: 2,
      final: false,
      at: T0,
    });
    expect(failedLater.recordings["1696937627"]).toMatchObject({ status: "archived", key: "k", attempts: 2 });
    expect(generated.recordingShard).toMatch(new RegExp(`^${APP}#[0-3]$`));
  });
});

describe("projector core (in memory)", () => {
  it("classifies events: projected, stale on redelivery, archived-only for tables we do not keep", async () => {
    const deps = memoryDeps();
    const created = inputOf(fixture("group_created"));
    expect(await projectKnownEvent(created.event, { eventId: "e1", receivedAt: T0 }, deps)).toBe("projected");
    expect(await projectKnownEvent(created.event, { eventId: "e1", receivedAt: T0 }, deps)).toBe("stale");
    const message = inputOf(fixture("message_sent"));
    expect(await projectKnownEvent(message.event, { eventId: "e2", receivedAt: T0 }, deps)).toBe(
      "archived-only",
    );
  });

  it("folds a batch: duplicates within it are stale and cost no write, a throttled item fails only its events", async () => {
    // Prepare: the in-memory stores, one of which fails every write of one group (as a throttle would).
    const stores = memoryStores();
    const failing = "guid-throttled";
    const groups = stores.groups;
    const applyMany = groups.applyMany.bind(groups);
    groups.applyMany = async (updates) =>
      (await applyMany(updates.filter((u) => !u.key.pk.endsWith(failing)))).concat(
        updates
          .filter((u) => u.key.pk.endsWith(failing))
          .map(() => ({ ok: false as const, error: new Error("throttled") })),
      );
    const created = fixture("group_created");
    const throttled = fixture("group_created");
    throttled.data.group.guid = failing;
    const presence = fixture("user_connection_status_changed");
    const queued = (json: Loose, i: number) => ({
      messageId: `m${i}`,
      eventId: `e${i % 3}`,
      receivedAt: T0 + i,
      trigger: json.trigger,
      appId: APP,
      body: JSON.stringify(json),
    });
    const batch = [created, created, throttled, presence].map(queued);
    batch[1] = { ...batch[1], eventId: "e0" } as (typeof batch)[number];

    // Act
    const results = await projectBatch(batch, memoryDeps(stores));

    // Assess
    expect(results.map((r) => ("error" in r ? "failed" : r.outcome))).toEqual([
      "projected",
      "stale",
      "failed",
      "projected",
    ]);
  });

  it("every projection's keys include the app, whatever the app id", () => {
    const cases: Array<[Projection<{ pk: string }, never>, string]> = [
      [groupsProjection as never, "group_member_added"],
      [membershipsProjection as never, "group_member_added"],
      [presenceProjection as never, "user_connection_status_changed"],
      [sessionsProjection as never, "call_participant_joined"],
    ];
    fc.assert(
      fc.property(fc.stringMatching(/^[\x21-\x7e]{1,40}$/), (appId) => {
        for (const [projection, trigger] of cases) {
          const input = inputOf({ ...fixture<Loose>(trigger), appId });
          expect(projection.handles(input.event)).toBe(true);
          const keys = projection.keys(input as never);
          expect(keys.length).toBeGreaterThan(0);
          for (const key of keys) expect(key.pk.startsWith(`${appId}#`)).toBe(true);
        }
      }),
      { numRuns: 50 },
    );
  });
});

describe("deliveries as the platform really sends them (#30)", () => {
  const queued = (json: Loose, i: number) => ({
    messageId: `m${i}`,
    eventId: `e${i}`,
    // After the fixtures' payload times: the ban is the latest fact about the owner.
    receivedAt: 1_800_000_000_000 + i * 1000,
    trigger: json.trigger,
    appId: json.appId,
    body: JSON.stringify(json),
  });

  it.each(["group_member_banned", "group_member_unbanned"])(
    "the on-behalf-of bug (%s names only its actor) is quarantined with its reason: the owner is not banned, the target stays a member",
    async (trigger) => {
      // Prepare: qa-user-1 creates the group, adds qa-user-2; then bans qa-user-2 on behalf of
      // itself, and the platform's delivery names qa-user-1 in data.members.
      const stores = memoryStores();
      const deps = memoryDeps(stores);
      const created = fixture("group_created");
      created.data.group = { ...created.data.group, guid: "qa-group-ban", owner: "qa-user-1" };
      created.data.members = { "qa-user-1": { uid: "qa-user-1", name: "qa-user-1" } };
      const added = fixture("group_member_added");
      added.data.group = { ...added.data.group, guid: "qa-group-ban", owner: "qa-user-1" };
      added.data.members = { "qa-user-2": { uid: "qa-user-2", name: "qa-user-2" } };
      added.data.by = { uid: "qa-user-1", name: "qa-user-1" };
      const bugged = fixture(`observed-live/${trigger}.on-behalf-of`);

      // Act
      const results = await projectBatch([created, added, bugged].map(queued), deps);

      // Assess
      expect(results.map((r) => ("error" in r ? "failed" : r.outcome))).toEqual([
        "projected",
        "projected",
        "quarantined",
      ]);
      const membership = (uid: string) =>
        [...stores.memberships.items.values()].find((m) => (m as { uid: string }).uid === uid) as
          | { status?: string }
          | undefined;
      expect(membership("qa-user-1")?.status).toBe("member");
      expect(membership("qa-user-2")?.status).toBe("member");
      const records = [
        ...(
          deps.dataStore as ReturnType<typeof memoryDeps>["dataStore"] & { objects: Map<string, Uint8Array> }
        ).objects.values(),
      ];
      const record = JSON.parse(Buffer.from(records[0] ?? new Uint8Array()).toString("utf8")) as {
        error: string;
      };
      expect(record.error).toContain("data.members holds only its actor (data.by = qa-user-1)");
      // Refused, it is in no figure (its archive line carries no facts).
      expect(archiveLine(queued(bugged, 2)).naturalKey).toBeUndefined();
      expect(archiveLine(queued(added, 1)).naturalKey).toBeDefined();
    },
  );

  it("a ban of another member by its actor is applied as before", async () => {
    const deps = memoryDeps();
    const ban = fixture("group_member_banned");
    const [result] = await projectBatch([queued(ban, 0)], deps);
    expect(result).toEqual({ outcome: "projected" });
  });
});

describe("slimmer deliveries (#30 item 3)", () => {
  it("accepts a delivery without webhook and region: only the app is required", () => {
    expect(inputOf(fixture("observed-live/message_sent.without-webhook-region")).event.trigger).toBe(
      "message_sent",
    );
  });

  it("records a membership whose group object is slim, and skips the group's details (no group item made from it)", async () => {
    // Prepare
    const stores = memoryStores();
    const slim = fixture("observed-live/group_member_added.slim-group");

    // Act
    const outcome = await projectKnownEvent(
      inputOf(slim).event,
      { eventId: "e1", receivedAt: T0 },
      memoryDeps(stores),
    );

    // Assess
    expect(outcome).toBe("projected");
    expect([...stores.memberships.items.values()].map((m) => (m as { status?: string }).status)).toEqual([
      "member",
    ]);
    expect(stores.groups.items.size).toBe(0);
  });

  it("a slim membership event leaves an existing group's details as they were", async () => {
    const stores = memoryStores();
    const deps = memoryDeps(stores);
    const created = fixture("group_created");
    await projectKnownEvent(inputOf(created).event, { eventId: "e0", receivedAt: T0 }, deps);
    const before = JSON.stringify([...stores.groups.items.values()]);
    const slim = fixture("observed-live/group_member_added.slim-group");
    await projectKnownEvent(inputOf(slim).event, { eventId: "e1", receivedAt: T0 + 1 }, deps);
    expect(JSON.stringify([...stores.groups.items.values()])).toBe(before);
  });
});

describe("per-trigger counts for the quarantine-rate alarm (#30)", () => {
  it("emits, per trigger in a batch, the events handled and quarantined; an unmodelled trigger as (other)", async () => {
    // Prepare: two live edits (accepted now), a broken one, a message, an unknown trigger.
    const edit = fixture("observed-live/message_edited.live");
    const broken = fixture("observed-live/message_edited.live");
    delete broken.data.message.id;
    const unknown = { ...fixture("message_sent"), trigger: "after_feed_item_read" };
    const second = fixture("observed-live/message_edited.live");
    second.data.message.editedAt += 1;
    const bodies = [edit, second, broken, fixture("message_sent"), unknown].map((b) => JSON.stringify(b));
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });

    // Act
    try {
      await projectSqsBatch(
        sqsEvent(bodies.map((b, i) => ingestRecordFor(b, T0 + i))),
        undefined,
        memoryDeps(),
        observability("projector"),
      );
    } finally {
      spy.mockRestore();
    }

    // Assess
    const perTrigger = written
      .flatMap((chunk) => chunk.split("\n"))
      .filter((line) => line.includes('"trigger"') && line.includes("_aws"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .map((m) => {
        const name = TRIGGER_METRICS.events in m ? TRIGGER_METRICS.events : TRIGGER_METRICS.quarantined;
        return `${m.service} ${m.trigger} ${name} ${m[name]}`;
      })
      .sort();
    // A quarantined count only where there is one (CloudWatch treats the missing value as no breach).
    expect(perTrigger).toEqual([
      "projector (other) TriggerEvents 1",
      "projector message_edited TriggerEvents 3",
      "projector message_edited TriggerQuarantined 1",
      "projector message_sent TriggerEvents 1",
    ]);
  });
});

describe("transcripts on sessions (#30 item 5)", () => {
  it("attaches transcription_generated to its session like a recording, its URL without the query, idempotently", async () => {
    const stores = memoryStores();
    const deps = memoryDeps(stores);
    const transcript = fixture("transcription_generated");
    transcript.data.transcript_url = "https://files.example.com/transcripts/1.txt?signature=secret";
    const event = inputOf(transcript).event;
    expect(await projectKnownEvent(event, { eventId: "t1", receivedAt: T0 }, deps)).toBe("projected");
    expect(await projectKnownEvent(event, { eventId: "t1", receivedAt: T0 + 5 }, deps)).toBe("stale");
    const [session] = [...stores.sessions.items.values()] as Array<{ transcripts?: Record<string, unknown> }>;
    // The fact fields (what a consumer's copy holds too): each transcript also keeps its fact's version (`v`, #57).
    expect(factFields("sessions", session ?? {}).transcripts).toEqual({
      "tr-1": {
        sourceUrl: "https://files.example.com/transcripts/1.txt",
        transcriptDate: "2023-10-10",
        startTime: 1696937627,
        endTime: 1696937648,
      },
    });
  });
});

describe("delivery facts from the platform's QA suite (#30 item 6)", () => {
  it("an ownership transfer made on behalf of a user fires group_updated, not group_owner_transferred: the owner follows the group's snapshot", async () => {
    const stores = memoryStores();
    const deps = memoryDeps(stores);
    const created = fixture("group_created");
    await projectKnownEvent(inputOf(created).event, { eventId: "c", receivedAt: T0 }, deps);
    const updated = fixture("group_updated");
    updated.data.group = {
      ...updated.data.group,
      owner: "qa-user-2",
      updatedAt: created.data.group.createdAt + 60,
    };
    await projectKnownEvent(inputOf(updated).event, { eventId: "u", receivedAt: T0 + 1 }, deps);
    const [group] = [...stores.groups.items.values()] as Array<{ owner: string }>;
    expect(group?.owner).toBe("qa-user-2");
  });

  it("user_mentioned and message_sent arrive as a pair for one message: one message counted, one mention", () => {
    const sent = fixture("message_sent");
    const mention = fixture("user_mentioned");
    mention.data.message.id = sent.data.message.id;
    const events = [sent, mention].map((b) => ({
      body: JSON.stringify(b),
      trigger: b.trigger,
      appId: b.appId,
      at: 0,
    }));
    const days = [
      ...(expectedActivity(events, () => 1_700_000_000_000)
        .get(sent.appId)
        ?.values() ?? []),
    ];
    expect(days.reduce((n, d) => n + d.figures.messages, 0)).toBe(1);
    expect(days.reduce((n, d) => n + d.figures.mentions, 0)).toBe(1);
  });
});
