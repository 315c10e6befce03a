import { Random } from "./random";
import { type Template, template } from "./templates";

/**
 * The world a simulated history happens in: the apps' state as the platform knows it (users,
 * groups, sessions, who is online, what was sent), the clock (`t`, epoch seconds), the seeded
 * random source and the events emitted so far, with the payload builders every action shares.
 * The actions (`actions.ts`) change it one fact at a time; `generateHistory` drives them.
 */

/** One event of a history, as the platform sends it. */
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
  /**
   * Seconds between two actions are multiplied by this (1: about a second apart): a pace of 1,000
   * spreads 3,000 events over a month, one history whose users come and go day after day.
   */
  pace?: number;
  /**
   * User entities carry `createdAt` (epoch s; spec 2.3): user i of an app was created i − 10 days
   * after the start (the first ten before it). Off by default: the published examples mostly omit it.
   */
  createdAt?: boolean;
}

const PLATFORMS = ["web", "android", "ios", "javascript"];
const FIRST = ["Andrew", "George", "Susan", "John", "Maria", "Wei", "Aisha", "Lukas", "Priya", "Omar"];
const LAST = ["Joseph", "Alan", "Marie", "Paul", "Silva", "Chen", "Khan", "Weber", "Nair", "Haddad"];

export interface Session {
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
export interface GroupModel {
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

export interface AppState {
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

/** A new app: 30 named users, nothing else yet. */
function newApp(appId: string): AppState {
  return {
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
  };
}

/**
 * A history's world, for `options` (seed, apps, start, recordings).
 *
 * @example new HistoryWorld({ events: 10, seed: 7, apps: ["app1"] }).apps[0]?.users.length // 30
 */
export class HistoryWorld {
  readonly random: Random;
  /** Now, epoch seconds: the time of the next event. */
  t: number;
  readonly apps: AppState[];
  readonly events: GeneratedEvent[] = [];
  readonly recordingBytes: [number, number];
  readonly recordingBaseUrl: string;
  /** When each user was created (epoch s), when entities carry it (`GeneratorOptions.createdAt`). */
  readonly createdAtOf?: (uid: string) => number;

  constructor(options: GeneratorOptions) {
    this.random = new Random(options.seed);
    this.t = options.startAt ?? 1_763_000_000;
    const start = this.t;
    if (options.createdAt)
      this.createdAtOf = (uid) => start + (Number(/-u(\d+)$/.exec(uid)?.[1] ?? 0) - 10) * 86_400;
    this.recordingBytes = options.recordingBytes ?? [64 * 1024, 512 * 1024];
    this.recordingBaseUrl = options.recordingBaseUrl ?? "http://127.0.0.1:8099";
    this.apps = options.apps.map(newApp);
  }

  envelope(app: AppState, e: Template) {
    e.appId = app.appId;
    e.region = "eu";
    e.webhook = "simulator";
    return e;
  }
  user(app: AppState, uid: string): Template {
    const u = app.users.find((x) => x.uid === uid) ?? { uid, name: uid };
    return {
      uid: u.uid,
      name: u.name,
      status: app.online.has(uid) ? "online" : "offline",
      role: "default",
      lastActiveAt: this.t,
      ...(this.createdAtOf ? { createdAt: this.createdAtOf(u.uid) } : {}),
    };
  }
  emit(app: AppState, e: Template, extra: Partial<GeneratedEvent> = {}) {
    this.envelope(app, e);
    this.events.push({
      body: JSON.stringify(e),
      trigger: e.trigger,
      appId: app.appId,
      at: this.t * 1000,
      ...extra,
    });
  }
  /**
   * An edit or delete of message `on` by its sender, now. Messages with an even id come in the
   * layout live deliveries have (the message itself, with `editedAt`/`editedBy` or
   * `deletedAt`/`deletedBy`), the others in the published example's action layout; both name the
   * real sender everywhere (the template's own users would be phantom active users).
   */
  messageChange(app: AppState, trigger: "message_edited" | "message_deleted", on: string) {
    const original = app.sent.get(on) ?? {
      sender: app.users[0]?.uid ?? "",
      receiver: app.users[1]?.uid ?? "",
      receiverType: "user",
      sentAt: this.t,
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
      data: trigger === "message_edited" ? { text: `hello ${on} (edited at ${this.t})` } : {},
      sentAt: original.sentAt,
      [atField]: this.t,
      [byField]: sender,
      updatedAt: this.t,
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
        : { entity: this.user(app, receiver), entityType: "user" };
    Object.assign(e.data.message, {
      id: `${app.nextMessage++}`,
      conversationId,
      sender,
      receiverType,
      receiver,
      sentAt: this.t,
      updatedAt: this.t,
    });
    const entities = e.data.message.data.entities;
    entities.by.entity = this.user(app, sender);
    if (receiverType === "user") entities.for.entity = this.user(app, receiver);
    else delete entities.for;
    entities.on.entity = {
      ...message,
      data: {
        ...message.data,
        entities: {
          sender: { entity: this.user(app, sender), entityType: "user" },
          receiver: receiverEntity,
        },
      },
    };
    return e;
  }
  /** Renames so far: each rename names the group differently, even within one second. */
  renames = 0;
  groupPayload(app: AppState, guid: string, extra: Template = {}) {
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
  }
  /** A presence event of user `u` at `ms`: the opposite of the user's current status. */
  emitPresence(app: AppState, u: string, ms: number) {
    const online = !app.online.has(u);
    if (online) app.online.add(u);
    else app.online.delete(u);
    app.presenceAt.set(u, ms);
    const e = template("user_connection_status_changed");
    e.data = {
      timestamp: ms,
      user: this.user(app, u),
      status: online ? "online" : "offline",
      currentConnection: {
        action: online ? "connected" : "disconnected",
        platform: this.random.pick(PLATFORMS),
        userAgent: "Mozilla/5.0 (simulator)",
        connectedAt: ms - this.random.int(0, 60_000),
        appInfo: { version: `4.${this.random.int(0, 3)}.0`, apiVersion: "v3.0", uts: ms - 10 },
      },
      userPresenceChanged: true,
    };
    this.emit(app, e, { at: ms, item: `presence:${u}` });
  }
  renameGroup(app: AppState, guid: string) {
    const g = app.groups.get(guid);
    if (!g) return;
    // A counter keeps two renames in one second apart (the same name twice would be one fact); no
    // time in the name, so that the state a history implies is the same whatever its start.
    g.name = `Group ${guid} v${++this.renames}`;
    const e = template("group_updated");
    e.data = { group: this.groupPayload(app, guid, { updatedAt: this.t, updatedBy: g.owner }) };
    this.emit(app, e, { item: `group:${guid}` });
  }
  deleteGroup(app: AppState, guid: string) {
    const g = app.groups.get(guid);
    if (!g) return;
    const e = template("group_deleted");
    e.data = { group: this.groupPayload(app, guid, { updatedAt: this.t, updatedBy: g.owner }) };
    g.deleted = true;
    this.emit(app, e, { item: `group:${guid}` });
  }
  transferOwner(app: AppState, guid: string): boolean {
    const g = app.groups.get(guid);
    const candidates = g
      ? [...g.members.keys()].filter((u) => u !== g.owner && !this.sentThisSecond(g, `${g.owner}>${u}`))
      : [];
    if (!g || candidates.length === 0) return false;
    const oldOwner = g.owner;
    g.owner = this.random.pick(candidates);
    this.thisSecond(g).add(`${oldOwner}>${g.owner}`);
    const e = template("group_owner_transferred");
    e.data = { group: this.groupPayload(app, guid, { updatedAt: this.t, updatedBy: oldOwner, oldOwner }) };
    this.emit(app, e, { item: `group:${guid}` });
    return true;
  }
  /** The facts sent about a group this second. */
  thisSecond(g: GroupModel) {
    if (g.thisSecond.at !== this.t) g.thisSecond = { at: this.t, facts: new Set() };
    return g.thisSecond.facts;
  }
  sentThisSecond(g: GroupModel, fact: string) {
    return this.thisSecond(g).has(fact);
  }
  liveGroups(app: AppState) {
    return [...app.groups].filter(([, g]) => !g.deleted).map(([guid]) => guid);
  }
}
