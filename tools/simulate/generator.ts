import { lifecycleRank } from "../../shared/projections/version";
import { Random } from "./random";
import { type Template, template } from "./templates";

/**
 * Plays the platform: a coherent, seeded history of webhook events for one or more apps, built
 * from the test fixtures, and the state the tables must end in.
 */
export interface GeneratedEvent {
  body: string;
  trigger: string;
  appId: string;
  /** Event time (ms) as the platform saw it. */
  at: number;
  /**
   * The item whose state the event's order decides (`group:<guid>` for group and membership
   * events, `presence:<uid>`, `session:<id>`): two deliveries about one item at the same instant
   * must be received in the order they were sent, since the first receipt breaks their tie.
   */
  item?: string;
  /** For recording_generated: the file the local file server serves. */
  recording?: { path: string; bytes: number };
}

export interface ExpectedApp {
  /** Every user of the app, as the platform lists them (`GET /v3/users`). */
  users: Array<{ uid: string; name: string }>;
  groups: Map<string, { name: string; owner: string; deleted: boolean; members: Map<string, string> }>;
  online: Set<string>;
  sessions: Map<
    string,
    { kind: "call" | "meet"; ended: boolean; outcome?: string; stints: number; recordings: number }
  >;
}

export interface GeneratedHistory {
  events: GeneratedEvent[];
  expected: Map<string, ExpectedApp>;
}

export interface GeneratorOptions {
  events: number;
  seed: number;
  apps: string[];
  /** Base of recording URLs (the simulator's file server). */
  recordingBaseUrl?: string;
  /** Recording sizes, bytes. */
  recordingBytes?: [number, number];
  /** Epoch seconds of the first event. */
  startAt?: number;
  /**
   * How often each app acts, relative to the others (`zipfWeights`: a few big apps, a long tail);
   * absent, every app alike. With weights an app starts with no group (and an app the history
   * never picks sends nothing).
   */
  appWeights?: readonly number[];
}

/**
 * Zipf-like weights for `n` apps: the k-th app acts 1/k as often as the first.
 *
 * @example zipfWeights(3) // [1, 0.5, 0.333…]
 */
export function zipfWeights(n: number): number[] {
  return Array.from({ length: n }, (_, k) => 1 / (k + 1));
}

const PLATFORMS = ["web", "android", "ios", "javascript"];
const FIRST = ["Andrew", "George", "Susan", "John", "Maria", "Wei", "Aisha", "Lukas", "Priya", "Omar"];
const LAST = ["Joseph", "Alan", "Marie", "Paul", "Silva", "Chen", "Khan", "Weber", "Nair", "Haddad"];

interface Session {
  id: string;
  kind: "call" | "meet";
  startedAt: number;
  present: Map<string, number>;
  /** When each name last joined: an occupant is known by name and join second, so a name rejoins in a later second. */
  joined: Map<string, number>;
  stints: number;
  /** A 1:1 call's two parties (by name): only they join it. Meetings take anyone. */
  parties?: string[];
}

/** A group as the simulator knows it. */
interface GroupModel {
  name: string;
  owner: string;
  members: Map<string, string>;
  banned: Set<string>;
  deleted: boolean;
  /**
   * Facts already sent about the group this second (`<from>><to>` transfers, member uids): the
   * same fact twice in one second has the same bytes, which no receiver can tell from a retry.
   */
  thisSecond: { at: number; facts: Set<string> };
}

interface AppState {
  appId: string;
  users: Array<{ uid: string; name: string }>;
  groups: Map<string, GroupModel>;
  online: Set<string>;
  sessions: Map<string, Session>;
  ended: Map<string, { kind: "call" | "meet"; outcome: string; stints: number; recordings: number }>;
  /** Each user's latest presence time (ms): a user's presence events never go back in time. */
  presenceAt: Map<string, number>;
  messages: string[];
  /** Who sent each message, to whom, and when: its edits and deletes are by its sender. */
  sent: Map<string, { sender: string; receiver: string; receiverType: string; sentAt: number }>;
  /** Group messages delivered to every member, and read by every member. */
  groupReceipts: { delivered: Set<string>; read: Set<string> };
  /** Messages edited this second: a second edit in the same second would be the same fact. */
  editedThisSecond: { at: number; ids: Set<string> };
  /** Receipts sent, by trigger, message and user. */
  receipts: Set<string>;
  nextGroup: number;
  nextSession: number;
  nextMessage: number;
}

const WEIGHTS = {
  presence: 14,
  message: 22,
  edit: 3,
  delete: 2,
  reaction: 5,
  receipt: 18,
  mention: 2,
  block: 1,
  groupCreate: 2,
  groupUpdate: 1.5,
  groupDelete: 0.4,
  member: 12,
  owner: 0.6,
  groupReceipt: 1.5,
  moderation: 0.6,
  call: 2,
  participant: 8,
  end: 1.8,
};

/**
 * Generates a history. Deterministic for a seed and a start (`startAt`, default 2025-11-13); the
 * start moves only the times, not the state the history implies.
 *
 * @example generateHistory({ events: 1000, seed: 7, apps: ["app1"] }).events.length // 1000 (or a few more)
 */
export function generateHistory(options: GeneratorOptions): GeneratedHistory {
  const random = new Random(options.seed);
  let t = options.startAt ?? 1_763_000_000;
  const [minBytes, maxBytes] = options.recordingBytes ?? [64 * 1024, 512 * 1024];
  const baseUrl = options.recordingBaseUrl ?? "http://127.0.0.1:8099";
  const apps: AppState[] = options.apps.map((appId) => ({
    appId,
    users: Array.from({ length: 30 }, (_, i) => ({
      uid: `${appId}-u${i + 1}`,
      name: `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}`,
    })),
    groups: new Map(),
    online: new Set(),
    sessions: new Map(),
    ended: new Map(),
    presenceAt: new Map(),
    messages: [],
    sent: new Map(),
    groupReceipts: { delivered: new Set(), read: new Set() },
    editedThisSecond: { at: 0, ids: new Set() },
    receipts: new Set(),
    nextGroup: 1,
    nextSession: 1,
    nextMessage: 1,
  }));
  const events: GeneratedEvent[] = [];

  const envelope = (app: AppState, e: Template) => {
    e.appId = app.appId;
    e.region = "eu";
    e.webhook = "simulator";
    return e;
  };
  const user = (app: AppState, uid: string): Template => {
    const u = app.users.find((x) => x.uid === uid) ?? { uid, name: uid };
    return {
      uid: u.uid,
      name: u.name,
      status: app.online.has(uid) ? "online" : "offline",
      role: "default",
      lastActiveAt: t,
    };
  };
  const emit = (app: AppState, e: Template, extra: Partial<GeneratedEvent> = {}) => {
    envelope(app, e);
    events.push({ body: JSON.stringify(e), trigger: e.trigger, appId: app.appId, at: t * 1000, ...extra });
  };
  /**
   * An edit or delete of message `on` by its sender, now. Messages with an even id come in the
   * layout live deliveries have (the message itself, with `editedAt`/`editedBy` or
   * `deletedAt`/`deletedBy`), the others in the published example's action layout; both name the
   * real sender everywhere (the template's own users would be phantom active users).
   */
  const messageChange = (app: AppState, trigger: "message_edited" | "message_deleted", on: string) => {
    const original = app.sent.get(on) ?? {
      sender: app.users[0]?.uid ?? "",
      receiver: app.users[1]?.uid ?? "",
      receiverType: "user",
      sentAt: t,
    };
    const { sender, receiver, receiverType } = original;
    const conversationId = receiverType === "group" ? `group_${receiver}` : `${sender}_user_${receiver}`;
    const [atField, byField] =
      trigger === "message_edited" ? ["editedAt", "editedBy"] : ["deletedAt", "deletedBy"];
    const message = {
      id: on,
      conversationId,
      sender,
      receiverType,
      receiver,
      category: "message",
      type: "text",
      data: trigger === "message_edited" ? { text: `hello ${on} (edited at ${t})` } : {},
      sentAt: original.sentAt,
      [atField]: t,
      [byField]: sender,
      updatedAt: t,
    };
    const e = template(trigger);
    if (Number(on) % 2 === 0) {
      e.data = { message };
      return e;
    }
    const receiverEntity =
      receiverType === "group"
        ? {
            entity: { guid: receiver, name: app.groups.get(receiver)?.name ?? receiver },
            entityType: "group",
          }
        : { entity: user(app, receiver), entityType: "user" };
    Object.assign(e.data.message, {
      id: `${app.nextMessage++}`,
      conversationId,
      sender,
      receiverType,
      receiver,
      sentAt: t,
      updatedAt: t,
    });
    const entities = e.data.message.data.entities;
    entities.by.entity = user(app, sender);
    if (receiverType === "user") entities.for.entity = user(app, receiver);
    else delete entities.for;
    entities.on.entity = {
      ...message,
      data: {
        ...message.data,
        entities: { sender: { entity: user(app, sender), entityType: "user" }, receiver: receiverEntity },
      },
    };
    return e;
  };
  /** Renames so far: each rename names the group differently, even within one second. */
  let renames = 0;
  const groupPayload = (app: AppState, guid: string, extra: Template = {}) => {
    const g = app.groups.get(guid);
    if (!g) throw new Error(`no group ${guid}`);
    return {
      guid,
      name: g.name,
      type: "public",
      membersCount: g.members.size,
      conversationId: `group_${guid}`,
      createdAt: 1_762_000_000,
      owner: g.owner,
      ...extra,
    };
  };
  /** A presence event of user `u` at `ms`: the opposite of the user's current status. */
  const emitPresence = (app: AppState, u: string, ms: number) => {
    const online = !app.online.has(u);
    if (online) app.online.add(u);
    else app.online.delete(u);
    app.presenceAt.set(u, ms);
    const e = template("user_connection_status_changed");
    e.data = {
      timestamp: ms,
      user: user(app, u),
      status: online ? "online" : "offline",
      currentConnection: {
        action: online ? "connected" : "disconnected",
        platform: random.pick(PLATFORMS),
        userAgent: "Mozilla/5.0 (simulator)",
        connectedAt: ms - random.int(0, 60_000),
        appInfo: { version: `4.${random.int(0, 3)}.0`, apiVersion: "v3.0", uts: ms - 10 },
      },
      userPresenceChanged: true,
    };
    emit(app, e, { at: ms, item: `presence:${u}` });
  };
  const renameGroup = (app: AppState, guid: string) => {
    const g = app.groups.get(guid);
    if (!g) return;
    // A counter keeps two renames in one second apart (the same name twice would be one fact); no
    // time in the name, so that the state a history implies is the same whatever its start.
    g.name = `Group ${guid} v${++renames}`;
    const e = template("group_updated");
    e.data = { group: groupPayload(app, guid, { updatedAt: t, updatedBy: g.owner }) };
    emit(app, e, { item: `group:${guid}` });
  };
  const deleteGroup = (app: AppState, guid: string) => {
    const g = app.groups.get(guid);
    if (!g) return;
    const e = template("group_deleted");
    e.data = { group: groupPayload(app, guid, { updatedAt: t, updatedBy: g.owner }) };
    g.deleted = true;
    emit(app, e, { item: `group:${guid}` });
  };
  const transferOwner = (app: AppState, guid: string): boolean => {
    const g = app.groups.get(guid);
    const candidates = g
      ? [...g.members.keys()].filter((u) => u !== g.owner && !sentThisSecond(g, `${g.owner}>${u}`))
      : [];
    if (!g || candidates.length === 0) return false;
    const oldOwner = g.owner;
    g.owner = random.pick(candidates);
    thisSecond(g).add(`${oldOwner}>${g.owner}`);
    const e = template("group_owner_transferred");
    e.data = { group: groupPayload(app, guid, { updatedAt: t, updatedBy: oldOwner, oldOwner }) };
    emit(app, e, { item: `group:${guid}` });
    return true;
  };
  /** The facts sent about a group this second. */
  const thisSecond = (g: GroupModel) => {
    if (g.thisSecond.at !== t) g.thisSecond = { at: t, facts: new Set() };
    return g.thisSecond.facts;
  };
  const sentThisSecond = (g: GroupModel, fact: string) => thisSecond(g).has(fact);
  const liveGroups = (app: AppState) => [...app.groups].filter(([, g]) => !g.deleted).map(([guid]) => guid);

  const actions: Record<keyof typeof WEIGHTS, (app: AppState) => boolean> = {
    presence(app) {
      const u = random.pick(app.users).uid;
      // Strictly after the user's previous presence event: the platform's clock does not go back.
      const ms = Math.max(t * 1000 + random.int(0, 999), (app.presenceAt.get(u) ?? 0) + 1);
      emitPresence(app, u, ms);
      // Now and then the user flaps within one millisecond: two facts at the same instant.
      if (random.chance(0.05)) emitPresence(app, u, ms);
      return true;
    },
    message(app) {
      const [a, b] = [random.pick(app.users), random.pick(app.users)];
      const e = template("message_sent");
      const id = `${app.nextMessage++}`;
      app.messages.push(id);
      Object.assign(e.data.message, {
        id,
        conversationId: `${a.uid}_user_${b.uid}`,
        sender: a.uid,
        receiver: b.uid,
        sentAt: t,
        updatedAt: t,
      });
      // One message in three whose sender is in a live group goes to one of its groups, chosen
      // by the message id (no random draw: a seed's other facts stay what they were).
      const own =
        Number(id) % 3 === 0 ? liveGroups(app).filter((g) => app.groups.get(g)?.members.has(a.uid)) : [];
      const guid = own[Number(id) % Math.max(own.length, 1)];
      if (guid) {
        Object.assign(e.data.message, {
          conversationId: `group_${guid}`,
          receiverType: "group",
          receiver: guid,
        });
        e.data.message.data.entities.receiver = {
          entity: { guid, name: app.groups.get(guid)?.name, type: "public", conversationId: `group_${guid}` },
          entityType: "group",
        };
      }
      e.data.message.data.text = `hello ${id}`;
      app.sent.set(id, {
        sender: a.uid,
        receiver: e.data.message.receiver,
        receiverType: e.data.message.receiverType,
        sentAt: t,
      });
      emit(app, e);
      return true;
    },
    edit(app) {
      if (app.messages.length === 0) return false;
      const on = random.pick(app.messages);
      if (app.editedThisSecond.at !== t) app.editedThisSecond = { at: t, ids: new Set() };
      if (app.editedThisSecond.ids.has(on)) return false;
      app.editedThisSecond.ids.add(on);
      emit(app, messageChange(app, "message_edited", on));
      return true;
    },
    delete(app) {
      if (app.messages.length === 0) return false;
      const on = random.pick(app.messages);
      emit(app, messageChange(app, "message_deleted", on));
      // A deleted message is edited, read or reacted to no more.
      app.messages.splice(app.messages.indexOf(on), 1);
      return true;
    },
    reaction(app) {
      if (app.messages.length === 0) return false;
      const u = random.pick(app.users);
      const e = template(random.chance(0.8) ? "message_reaction_added" : "message_reaction_removed");
      e.data.reaction = {
        id: `${app.nextMessage++}`,
        messageId: random.pick(app.messages),
        reaction: random.pick(["👍", "🎉", "❤️"]),
        uid: u.uid,
        reactedAt: t,
        reactedBy: user(app, u.uid),
      };
      emit(app, e);
      return true;
    },
    receipt(app) {
      if (app.messages.length === 0) return false;
      const e = template(random.chance(0.5) ? "message_delivery_receipt" : "message_read_receipt");
      const u = random.pick(app.users);
      e.data.body.messageId = random.pick(app.messages);
      e.data.body.user = user(app, u.uid);
      e.data.body.timestamp = t;
      e.data.sender = u.uid;
      // A user delivers or reads a message once: a second receipt would be the same fact.
      const fact = `${e.trigger}|${e.data.body.messageId}|${u.uid}`;
      if (app.receipts.has(fact)) return false;
      app.receipts.add(fact);
      emit(app, e);
      return true;
    },
    mention(app) {
      const [a, b] = [random.pick(app.users), random.pick(app.users)];
      const e = template("user_mentioned");
      Object.assign(e.data.message, {
        id: `${app.nextMessage++}`,
        sender: a.uid,
        receiver: b.uid,
        sentAt: t,
        updatedAt: t,
      });
      e.data.message.data.text = `hi <@uid:${b.uid}>`;
      e.data.message.data.mentions = { [b.uid]: user(app, b.uid) };
      emit(app, e);
      return true;
    },
    block(app) {
      const [a, b] = [random.pick(app.users), random.pick(app.users)];
      const e = template(random.chance(0.7) ? "user_blocked" : "user_unblocked");
      e.data = { users: { [b.uid]: user(app, b.uid) }, by: user(app, a.uid) };
      emit(app, e);
      return true;
    },
    groupCreate(app) {
      const guid = `${app.appId}-g${app.nextGroup++}`;
      const owner = random.pick(app.users).uid;
      app.groups.set(guid, {
        name: `Group ${guid}`,
        owner,
        members: new Map([[owner, "admin"]]),
        banned: new Set(),
        thisSecond: { at: t, facts: new Set() },
        deleted: false,
      });
      const e = template("group_created");
      e.data.group = {
        ...groupPayload(app, guid),
        scope: "admin",
        joinedAt: t,
        hasJoined: true,
        createdAt: t,
      };
      e.data.members = { [owner]: user(app, owner) };
      emit(app, e, { item: `group:${guid}` });
      // Now and then a group is gone within the second it was made: a tie the lifecycle decides.
      if (app.groups.size > 3 && random.chance(0.1)) deleteGroup(app, guid);
      return true;
    },
    groupUpdate(app) {
      const guid = liveGroups(app).length ? random.pick(liveGroups(app)) : undefined;
      if (!guid) return false;
      renameGroup(app, guid);
      // Two renames in one second: the one received later wins.
      if (random.chance(0.3)) renameGroup(app, guid);
      return true;
    },
    groupDelete(app) {
      const guid = liveGroups(app).length > 2 ? random.pick(liveGroups(app)) : undefined;
      if (!guid) return false;
      deleteGroup(app, guid);
      return true;
    },
    owner(app) {
      const guid = liveGroups(app).length ? random.pick(liveGroups(app)) : undefined;
      if (!guid || !transferOwner(app, guid)) return false;
      // Ownership passed on twice in one second (ha → hb → hc).
      if (random.chance(0.3)) transferOwner(app, guid);
      return true;
    },
    member(app) {
      const guid = liveGroups(app).length ? random.pick(liveGroups(app)) : undefined;
      const g = guid ? app.groups.get(guid) : undefined;
      if (!guid || !g) return false;
      const u = random.pick(app.users).uid;
      if (u === g.owner) return false;
      if (sentThisSecond(g, u)) return false;
      thisSecond(g).add(u);
      const isMember = g.members.has(u);
      const banned = g.banned.has(u);
      const options: string[] = banned
        ? ["group_member_unbanned"]
        : isMember
          ? ["group_member_left", "group_member_kicked", "group_member_banned", "group_member_scope_changed"]
          : ["group_member_joined", "group_member_added", "group_member_banned"];
      const trigger = random.pick(options);
      const member: Template = user(app, u);
      if (trigger === "group_member_joined" || trigger === "group_member_added")
        g.members.set(u, "participant");
      else if (trigger === "group_member_unbanned") g.banned.delete(u);
      else if (trigger === "group_member_scope_changed") {
        const scope = g.members.get(u) === "admin" ? "participant" : "admin";
        member.oldScope = g.members.get(u);
        member.scope = scope;
        g.members.set(u, scope);
      } else {
        g.members.delete(u);
        if (trigger === "group_member_banned") g.banned.add(u);
      }
      const e = template(trigger);
      e.data.group = groupPayload(app, guid);
      e.data.members = { [u]: member };
      if ("by" in e.data) e.data.by = user(app, g.owner);
      emit(app, e, { item: `group:${guid}` });
      return true;
    },
    groupReceipt(app) {
      // A group message delivered to every member, later read by every member (verified live).
      const { delivered, read } = app.groupReceipts;
      const candidates = app.messages.filter(
        (id) => app.sent.get(id)?.receiverType === "group" && !read.has(id),
      );
      if (candidates.length === 0) return false;
      const id = random.pick(candidates);
      const message = app.sent.get(id);
      if (!message) return false;
      const toAll = !delivered.has(id);
      (toAll ? delivered : read).add(id);
      const trigger = toAll ? "message_delivered_to_all" : "message_read_by_all";
      const e = template(trigger);
      e.data = {
        ...e.data,
        receiver: message.receiver,
        receiverType: "group",
        messageSender: message.sender,
        body: { ...e.data.body, messageId: id, timestamp: t, action: toAll ? "deliveredToAll" : "readByAll" },
      };
      emit(app, e);
      return true;
    },
    moderation(app) {
      // A message a moderation rule blocked (it fires no message_sent), or one it approved.
      const [a, b] = [random.pick(app.users), random.pick(app.users)];
      const e = template(random.chance(0.7) ? "moderation_engine_blocked" : "moderation_engine_approved");
      Object.assign(e.data.message, {
        id: `${app.nextMessage++}`,
        conversationId: `${a.uid}_user_${b.uid}`,
        sender: a.uid,
        receiver: b.uid,
        sentAt: t,
        updatedAt: t,
      });
      e.data.message.data = { text: `blocked ${t}`, moderation: { status: "disapproved" } };
      emit(app, e);
      return true;
    },
    call(app) {
      if (app.sessions.size >= 3) return false;
      const kind = random.chance(0.6) ? "call" : "meet";
      const id = `v1.eu.${app.appId}.s${app.nextSession++}`;
      const session: Session = { id, kind, startedAt: t, present: new Map(), joined: new Map(), stints: 0 };
      app.sessions.set(id, session);
      if (kind === "call") {
        const a = random.pick(app.users);
        const b = random.pick(app.users.filter((u) => u.uid !== a.uid));
        session.parties = [a.name, b.name];
        const e = template("call_initiated");
        Object.assign(e.data.call, {
          sender: a.uid,
          receiver: b.uid,
          conversationId: `${a.uid}_user_${b.uid}`,
          sentAt: t,
          updatedAt: t,
        });
        e.data.call.data.entities.by.entity = user(app, a.uid);
        e.data.call.data.entities.for.entity = user(app, b.uid);
        Object.assign(e.data.call.data.entities.on.entity, {
          sessionid: id,
          initiatedAt: t,
          joinedAt: t,
          sender: a.uid,
          receiver: b.uid,
        });
        emit(app, e, { item: `session:${id}` });
        if (random.chance(0.1)) {
          // Not answered: the session ends there, often within the second it was initiated.
          if (random.chance(0.5)) t += 1;
          const outcome = template(
            random.pick(["call_busy", "call_rejected", "call_unanswered", "call_cancelled"]),
          );
          outcome.data.call = {
            ...e.data.call,
            sentAt: t,
            updatedAt: t,
            data: { ...e.data.call.data, action: outcome.trigger.slice(5) },
          };
          emit(app, outcome, { item: `session:${id}` });
          app.sessions.delete(id);
          app.ended.set(id, { kind, outcome: outcome.trigger.slice(5), stints: 0, recordings: 0 });
          return true;
        }
      }
      t += 1;
      const started = template(kind === "call" ? "call_started" : "meeting_started");
      started.data = { created_at: t, sessionId: id };
      session.startedAt = t;
      emit(app, started, { item: `session:${id}` });
      return true;
    },
    participant(app) {
      const session = app.sessions.size ? random.pick([...app.sessions.values()]) : undefined;
      if (!session) return false;
      const name = session.parties ? random.pick(session.parties) : random.pick(app.users).name;
      const prefix = session.kind === "call" ? "call" : "meeting";
      const since = session.present.get(name);
      if (since === undefined) {
        if (session.joined.get(name) === t) return false;
        session.joined.set(name, t);
        const e = template(`${prefix}_participant_joined`);
        e.data.occupant = { joined_at: t, audio_call: session.kind === "call" ? "true" : "false", name };
        e.data.sessionId = session.id;
        session.present.set(name, t);
        session.stints++;
        emit(app, e, { item: `session:${session.id}` });
      } else {
        const e = template(`${prefix}_participant_left`);
        e.data = {
          occupant: {
            joined_at: since,
            left_at: t,
            audio_call: session.kind === "call" ? "true" : "false",
            name,
          },
          sessionId: session.id,
        };
        session.present.delete(name);
        emit(app, e, { item: `session:${session.id}` });
      }
      return true;
    },
    end(app) {
      const session = app.sessions.size ? random.pick([...app.sessions.values()]) : undefined;
      if (!session) return false;
      const prefix = session.kind === "call" ? "call" : "meeting";
      const e = template(`${prefix}_ended`);
      e.data = {
        all_occupants: [...session.present].map(([name, joined]) => ({
          joined_at: joined,
          left_at: t,
          audio_call: session.kind === "call" ? "true" : "false",
          name,
        })),
        destroyed_at: t,
        created_at: session.startedAt,
        sessionId: session.id,
      };
      emit(app, e, { item: `session:${session.id}` });
      app.sessions.delete(session.id);
      const recorded = session.stints > 0 && random.chance(0.5);
      app.ended.set(session.id, {
        kind: session.kind,
        outcome: "ended",
        stints: session.stints,
        recordings: recorded ? 1 : 0,
      });
      if (recorded) {
        t += 2;
        const bytes = random.int(minBytes, maxBytes);
        const path = `/recordings/${encodeURIComponent(session.id)}-${bytes}.mp4`;
        const r = template("recording_generated");
        r.data = {
          recordingDate: new Date(session.startedAt * 1000).toISOString().slice(0, 10),
          duration: `${t - session.startedAt}.250000`,
          startTime: String(session.startedAt),
          sessionId: session.id,
          recording_url: `${baseUrl}${path}?token=${random.int(1, 1e9)}`,
        };
        emit(app, r, { recording: { path, bytes }, item: `session:${session.id}` });
        // Its transcript, attached to the session like the recording.
        const tr = template("transcription_generated");
        tr.data = {
          sessionId: session.id,
          tid: `tr-${session.id}`,
          transcriptDate: r.data.recordingDate,
          transcript_url: `${baseUrl}/transcripts/${encodeURIComponent(session.id)}.txt?token=${random.int(1, 1e9)}`,
          startTime: session.startedAt,
          endTime: t,
        };
        emit(app, tr, { item: `session:${session.id}` });
      }
      return true;
    },
  };

  // Start with some groups and sessions so that every kind of event has something to act on.
  // Weighted, an app starts with no group (its actions that need one wait until it creates one),
  // so that a thousand apps' histories keep the mix of one app's rather than three group
  // creations per app.
  const weights = options.appWeights;
  if (!weights)
    for (const app of apps) {
      actions.groupCreate(app);
      actions.groupCreate(app);
      actions.groupCreate(app);
    }
  const byWeight = weights && Object.fromEntries(apps.map((_a, i) => [String(i), weights[i] ?? 0]));
  while (events.length < options.events) {
    const app = byWeight ? (apps[Number(random.weighted(byWeight))] as AppState) : random.pick(apps);
    t += random.int(0, 2);
    actions[random.weighted(WEIGHTS)](app);
  }

  const expected = new Map<string, ExpectedApp>();
  for (const app of apps) {
    const sessions = new Map<
      string,
      { kind: "call" | "meet"; ended: boolean; outcome?: string; stints: number; recordings: number }
    >();
    for (const [id, s] of app.ended) sessions.set(id, { ...s, ended: true });
    for (const [id, s] of app.sessions)
      sessions.set(id, { kind: s.kind, ended: false, stints: s.stints, recordings: 0 });
    expected.set(app.appId, {
      users: app.users,
      groups: new Map(
        [...app.groups].map(([guid, g]) => [
          guid,
          { name: g.name, owner: g.owner, deleted: g.deleted, members: g.members },
        ]),
      ),
      online: app.online,
      sessions,
    });
  }
  return { events, expected };
}

/** Triggers without an event time: nothing in their payload could restore an order, so they keep theirs. */
const UNORDERED = /^(group_member_|user_blocked|user_unblocked)/;

export interface DeliveryPlanOptions {
  seed: number;
  /** Share of events delivered twice (the copy later, as a platform retry would be). */
  duplicateShare: number;
  /** Share of events swapped with a neighbour within a window of 8. */
  reorderShare: number;
}

/**
 * Whether two events must be received in the order they were sent: two without an event time
 * (nothing in their payloads could restore their order), or two about one item at the same
 * instant and the same lifecycle rank (their first receipts break the tie). A terminal step may
 * arrive before the opening step of its second: the rank puts them back in order.
 */
function receiptOrdered(a: GeneratedEvent, b: GeneratedEvent): boolean {
  if (UNORDERED.test(a.trigger) && UNORDERED.test(b.trigger)) return true;
  return (
    a.item !== undefined &&
    a.item === b.item &&
    a.at === b.at &&
    lifecycleRank(a.trigger) === lifecycleRank(b.trigger)
  );
}

/**
 * The order deliveries go out in: duplicates re-sent 20 to 60 deliveries later, and some
 * neighbours swapped. Events that must be received in the order they were sent
 * (`receiptOrdered`) never overtake each other.
 */
export function deliveryPlan(
  events: readonly GeneratedEvent[],
  options: DeliveryPlanOptions,
): GeneratedEvent[] {
  const random = new Random(options.seed ^ 0x5eed);
  const order = [...events];
  for (let i = 0; i < order.length; i++) {
    if (!random.chance(options.reorderShare)) continue;
    const j = Math.min(order.length - 1, i + random.int(1, 8));
    const [a, b] = [order[i] as GeneratedEvent, order[j] as GeneratedEvent];
    // Swapping moves a past everything up to b, and b back past everything from a.
    const crossed = order.slice(i + 1, j);
    if (receiptOrdered(a, b) || crossed.some((e) => receiptOrdered(a, e) || receiptOrdered(e, b))) continue;
    order[i] = b;
    order[j] = a;
  }
  // Facts of one instant whose lifecycle orders them (created and deleted in one second, a call
  // initiated and rejected) often arrive the other way round: half of them swap in transit.
  for (let i = 1; i < order.length && options.reorderShare > 0; i++) {
    const [a, b] = [order[i - 1] as GeneratedEvent, order[i] as GeneratedEvent];
    if (a.item === undefined || a.item !== b.item || a.at !== b.at || !random.chance(0.5)) continue;
    if (lifecycleRank(a.trigger) === lifecycleRank(b.trigger)) continue;
    order[i - 1] = b;
    order[i] = a;
  }
  const plan: GeneratedEvent[] = [];
  const pending: Array<{ at: number; event: GeneratedEvent }> = [];
  order.forEach((event, index) => {
    plan.push(event);
    if (random.chance(options.duplicateShare)) pending.push({ at: index + random.int(20, 60), event });
    for (const due of pending.filter((p) => p.at === index)) plan.push(due.event);
  });
  for (const late of pending.filter((p) => p.at >= order.length)) plan.push(late.event);
  return plan;
}
