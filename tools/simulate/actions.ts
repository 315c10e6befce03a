import { type Template, template } from "./templates";
import type { AppState, HistoryWorld, Session } from "./world";

/**
 * What can happen in a simulated history, one fact (or a tie of facts in one second) at a time:
 * each action changes the world and emits what the platform would send, or returns false when
 * the app has nothing to act on. Grouped as the platform's areas are: messaging, groups, calls.
 */

/** How often each action is drawn, relative to the others. */
export const WEIGHTS = {
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

/** An action: true when it emitted something. */
export type Action = (w: HistoryWorld, app: AppState) => boolean;

/** Presence, messages and what happens to them (edits, deletes, reactions, receipts, moderation), blocks. */
const MESSAGING_ACTIONS = {
  presence(w: HistoryWorld, app: AppState): boolean {
    const u = w.random.pick(app.users).uid;
    // Strictly after the user's previous presence event: the platform's clock does not go back.
    const ms = Math.max(w.t * 1000 + w.random.int(0, 999), (app.presenceAt.get(u) ?? 0) + 1);
    w.emitPresence(app, u, ms);
    // Now and then the user flaps within one millisecond: two facts at the same instant.
    if (w.random.chance(0.05)) w.emitPresence(app, u, ms);
    return true;
  },
  message(w: HistoryWorld, app: AppState): boolean {
    const [a, b] = [w.random.pick(app.users), w.random.pick(app.users)];
    const e = template("message_sent");
    const id = `${app.nextMessage++}`;
    app.messages.push(id);
    Object.assign(e.data.message, {
      id,
      conversationId: `${a.uid}_user_${b.uid}`,
      sender: a.uid,
      receiver: b.uid,
      sentAt: w.t,
      updatedAt: w.t,
    });
    // One message in three whose sender is in a live group goes to one of its groups, chosen
    // by the message id (no random draw: a seed's other facts stay what they were).
    const own =
      Number(id) % 3 === 0 ? w.liveGroups(app).filter((g) => app.groups.get(g)?.members.has(a.uid)) : [];
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
      sentAt: w.t,
    });
    w.emit(app, e);
    return true;
  },
  edit(w: HistoryWorld, app: AppState): boolean {
    if (app.messages.length === 0) return false;
    const on = w.random.pick(app.messages);
    if (app.editedThisSecond.at !== w.t) app.editedThisSecond = { at: w.t, ids: new Set() };
    if (app.editedThisSecond.ids.has(on)) return false;
    app.editedThisSecond.ids.add(on);
    w.emit(app, w.messageChange(app, "message_edited", on));
    return true;
  },
  delete(w: HistoryWorld, app: AppState): boolean {
    if (app.messages.length === 0) return false;
    const on = w.random.pick(app.messages);
    w.emit(app, w.messageChange(app, "message_deleted", on));
    // A deleted message is edited, read or reacted to no more.
    app.messages.splice(app.messages.indexOf(on), 1);
    return true;
  },
  reaction(w: HistoryWorld, app: AppState): boolean {
    if (app.messages.length === 0) return false;
    const u = w.random.pick(app.users);
    const e = template(w.random.chance(0.8) ? "message_reaction_added" : "message_reaction_removed");
    e.data.reaction = {
      id: `${app.nextMessage++}`,
      messageId: w.random.pick(app.messages),
      reaction: w.random.pick(["👍", "🎉", "❤️"]),
      uid: u.uid,
      reactedAt: w.t,
      reactedBy: w.user(app, u.uid),
    };
    w.emit(app, e);
    return true;
  },
  receipt(w: HistoryWorld, app: AppState): boolean {
    if (app.messages.length === 0) return false;
    const e = template(w.random.chance(0.5) ? "message_delivery_receipt" : "message_read_receipt");
    const u = w.random.pick(app.users);
    e.data.body.messageId = w.random.pick(app.messages);
    e.data.body.user = w.user(app, u.uid);
    e.data.body.timestamp = w.t;
    e.data.sender = u.uid;
    // A user delivers or reads a message once: a second receipt would be the same fact.
    const fact = `${e.trigger}|${e.data.body.messageId}|${u.uid}`;
    if (app.receipts.has(fact)) return false;
    app.receipts.add(fact);
    w.emit(app, e);
    return true;
  },
  mention(w: HistoryWorld, app: AppState): boolean {
    const [a, b] = [w.random.pick(app.users), w.random.pick(app.users)];
    const e = template("user_mentioned");
    Object.assign(e.data.message, {
      id: `${app.nextMessage++}`,
      sender: a.uid,
      receiver: b.uid,
      sentAt: w.t,
      updatedAt: w.t,
    });
    e.data.message.data.text = `hi <@uid:${b.uid}>`;
    e.data.message.data.mentions = { [b.uid]: w.user(app, b.uid) };
    w.emit(app, e);
    return true;
  },
  block(w: HistoryWorld, app: AppState): boolean {
    const [a, b] = [w.random.pick(app.users), w.random.pick(app.users)];
    const e = template(w.random.chance(0.7) ? "user_blocked" : "user_unblocked");
    e.data = { users: { [b.uid]: w.user(app, b.uid) }, by: w.user(app, a.uid) };
    w.emit(app, e);
    return true;
  },
  groupReceipt(w: HistoryWorld, app: AppState): boolean {
    // A group message delivered to every member, later read by every member (verified live).
    const { delivered, read } = app.groupReceipts;
    const candidates = app.messages.filter(
      (id) => app.sent.get(id)?.receiverType === "group" && !read.has(id),
    );
    if (candidates.length === 0) return false;
    const id = w.random.pick(candidates);
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
      body: { ...e.data.body, messageId: id, timestamp: w.t, action: toAll ? "deliveredToAll" : "readByAll" },
    };
    w.emit(app, e);
    return true;
  },
  moderation(w: HistoryWorld, app: AppState): boolean {
    // A message a moderation rule blocked (it fires no message_sent), or one it approved.
    const [a, b] = [w.random.pick(app.users), w.random.pick(app.users)];
    const e = template(w.random.chance(0.7) ? "moderation_engine_blocked" : "moderation_engine_approved");
    Object.assign(e.data.message, {
      id: `${app.nextMessage++}`,
      conversationId: `${a.uid}_user_${b.uid}`,
      sender: a.uid,
      receiver: b.uid,
      sentAt: w.t,
      updatedAt: w.t,
    });
    e.data.message.data = { text: `blocked ${w.t}`, moderation: { status: "disapproved" } };
    w.emit(app, e);
    return true;
  },
};

/** Groups: created, renamed, deleted, passed on, and their members. */
const GROUP_ACTIONS = {
  groupCreate(w: HistoryWorld, app: AppState): boolean {
    const guid = `${app.appId}-g${app.nextGroup++}`;
    const owner = w.random.pick(app.users).uid;
    app.groups.set(guid, {
      name: `Group ${guid}`,
      owner,
      members: new Map([[owner, "admin"]]),
      banned: new Set(),
      thisSecond: { at: w.t, facts: new Set() },
      deleted: false,
    });
    const e = template("group_created");
    e.data.group = {
      ...w.groupPayload(app, guid),
      scope: "admin",
      joinedAt: w.t,
      hasJoined: true,
      createdAt: w.t,
    };
    e.data.members = { [owner]: w.user(app, owner) };
    w.emit(app, e, { item: `group:${guid}` });
    // Now and then a group is gone within the second it was made: a tie the lifecycle decides.
    if (app.groups.size > 3 && w.random.chance(0.1)) w.deleteGroup(app, guid);
    return true;
  },
  groupUpdate(w: HistoryWorld, app: AppState): boolean {
    const guid = w.liveGroups(app).length ? w.random.pick(w.liveGroups(app)) : undefined;
    if (!guid) return false;
    w.renameGroup(app, guid);
    // Two renames in one second: the one received later wins.
    if (w.random.chance(0.3)) w.renameGroup(app, guid);
    return true;
  },
  groupDelete(w: HistoryWorld, app: AppState): boolean {
    const guid = w.liveGroups(app).length > 2 ? w.random.pick(w.liveGroups(app)) : undefined;
    if (!guid) return false;
    w.deleteGroup(app, guid);
    return true;
  },
  owner(w: HistoryWorld, app: AppState): boolean {
    const guid = w.liveGroups(app).length ? w.random.pick(w.liveGroups(app)) : undefined;
    if (!guid || !w.transferOwner(app, guid)) return false;
    // Ownership passed on twice in one second (ha → hb → hc).
    if (w.random.chance(0.3)) w.transferOwner(app, guid);
    return true;
  },
  member(w: HistoryWorld, app: AppState): boolean {
    const guid = w.liveGroups(app).length ? w.random.pick(w.liveGroups(app)) : undefined;
    const g = guid ? app.groups.get(guid) : undefined;
    if (!guid || !g) return false;
    const u = w.random.pick(app.users).uid;
    if (u === g.owner) return false;
    if (w.sentThisSecond(g, u)) return false;
    w.thisSecond(g).add(u);
    const isMember = g.members.has(u);
    const banned = g.banned.has(u);
    const options: string[] = banned
      ? ["group_member_unbanned"]
      : isMember
        ? ["group_member_left", "group_member_kicked", "group_member_banned", "group_member_scope_changed"]
        : ["group_member_joined", "group_member_added", "group_member_banned"];
    const trigger = w.random.pick(options);
    const member: Template = w.user(app, u);
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
    e.data.group = w.groupPayload(app, guid);
    e.data.members = { [u]: member };
    if ("by" in e.data) e.data.by = w.user(app, g.owner);
    w.emit(app, e, { item: `group:${guid}` });
    return true;
  },
};

/** Calls and meetings: initiated or started, their participants, their end, recordings and transcripts. */
const CALL_ACTIONS = {
  call(w: HistoryWorld, app: AppState): boolean {
    if (app.sessions.size >= 3) return false;
    const kind = w.random.chance(0.6) ? "call" : "meet";
    const id = `v1.eu.${app.appId}.s${app.nextSession++}`;
    const session: Session = { id, kind, startedAt: w.t, present: new Map(), joined: new Map(), stints: 0 };
    app.sessions.set(id, session);
    if (kind === "call") {
      const a = w.random.pick(app.users);
      const b = w.random.pick(app.users.filter((u) => u.uid !== a.uid));
      session.parties = [a.name, b.name];
      const e = template("call_initiated");
      Object.assign(e.data.call, {
        sender: a.uid,
        receiver: b.uid,
        conversationId: `${a.uid}_user_${b.uid}`,
        sentAt: w.t,
        updatedAt: w.t,
      });
      e.data.call.data.entities.by.entity = w.user(app, a.uid);
      e.data.call.data.entities.for.entity = w.user(app, b.uid);
      Object.assign(e.data.call.data.entities.on.entity, {
        sessionid: id,
        initiatedAt: w.t,
        joinedAt: w.t,
        sender: a.uid,
        receiver: b.uid,
      });
      w.emit(app, e, { item: `session:${id}` });
      if (w.random.chance(0.1)) {
        // Not answered: the session ends there, often within the second it was initiated.
        if (w.random.chance(0.5)) w.t += 1;
        const outcome = template(
          w.random.pick(["call_busy", "call_rejected", "call_unanswered", "call_cancelled"]),
        );
        outcome.data.call = {
          ...e.data.call,
          sentAt: w.t,
          updatedAt: w.t,
          data: { ...e.data.call.data, action: outcome.trigger.slice(5) },
        };
        w.emit(app, outcome, { item: `session:${id}` });
        app.sessions.delete(id);
        app.ended.set(id, { kind, outcome: outcome.trigger.slice(5), stints: 0, recordings: 0 });
        return true;
      }
    }
    w.t += 1;
    const started = template(kind === "call" ? "call_started" : "meeting_started");
    started.data = { created_at: w.t, sessionId: id };
    session.startedAt = w.t;
    w.emit(app, started, { item: `session:${id}` });
    return true;
  },
  participant(w: HistoryWorld, app: AppState): boolean {
    const session = app.sessions.size ? w.random.pick([...app.sessions.values()]) : undefined;
    if (!session) return false;
    const name = session.parties ? w.random.pick(session.parties) : w.random.pick(app.users).name;
    const prefix = session.kind === "call" ? "call" : "meeting";
    const since = session.present.get(name);
    if (since === undefined) {
      if (session.joined.get(name) === w.t) return false;
      session.joined.set(name, w.t);
      const e = template(`${prefix}_participant_joined`);
      e.data.occupant = { joined_at: w.t, audio_call: session.kind === "call" ? "true" : "false", name };
      e.data.sessionId = session.id;
      session.present.set(name, w.t);
      session.stints++;
      w.emit(app, e, { item: `session:${session.id}` });
    } else {
      const e = template(`${prefix}_participant_left`);
      e.data = {
        occupant: {
          joined_at: since,
          left_at: w.t,
          audio_call: session.kind === "call" ? "true" : "false",
          name,
        },
        sessionId: session.id,
      };
      session.present.delete(name);
      w.emit(app, e, { item: `session:${session.id}` });
    }
    return true;
  },
  end(w: HistoryWorld, app: AppState): boolean {
    const session = app.sessions.size ? w.random.pick([...app.sessions.values()]) : undefined;
    if (!session) return false;
    const prefix = session.kind === "call" ? "call" : "meeting";
    const e = template(`${prefix}_ended`);
    e.data = {
      all_occupants: [...session.present].map(([name, joined]) => ({
        joined_at: joined,
        left_at: w.t,
        audio_call: session.kind === "call" ? "true" : "false",
        name,
      })),
      destroyed_at: w.t,
      created_at: session.startedAt,
      sessionId: session.id,
    };
    w.emit(app, e, { item: `session:${session.id}` });
    app.sessions.delete(session.id);
    const recorded = session.stints > 0 && w.random.chance(0.5);
    app.ended.set(session.id, {
      kind: session.kind,
      outcome: "ended",
      stints: session.stints,
      recordings: recorded ? 1 : 0,
    });
    if (recorded) {
      w.t += 2;
      const bytes = w.random.int(w.recordingBytes[0], w.recordingBytes[1]);
      const path = `/recordings/${encodeURIComponent(session.id)}-${bytes}.mp4`;
      const r = template("recording_generated");
      r.data = {
        recordingDate: new Date(session.startedAt * 1000).toISOString().slice(0, 10),
        duration: `${w.t - session.startedAt}.250000`,
        startTime: String(session.startedAt),
        sessionId: session.id,
        recording_url: `${w.recordingBaseUrl}${path}?token=${w.random.int(1, 1e9)}`,
      };
      w.emit(app, r, { recording: { path, bytes }, item: `session:${session.id}` });
      // Its transcript, attached to the session like the recording.
      const tr = template("transcription_generated");
      tr.data = {
        sessionId: session.id,
        tid: `tr-${session.id}`,
        transcriptDate: r.data.recordingDate,
        transcript_url: `${w.recordingBaseUrl}/transcripts/${encodeURIComponent(session.id)}.txt?token=${w.random.int(1, 1e9)}`,
        startTime: session.startedAt,
        endTime: w.t,
      };
      w.emit(app, tr, { item: `session:${session.id}` });
    }
    return true;
  },
};

/** Every action, by its weight's name. */
export const ACTIONS: Record<keyof typeof WEIGHTS, Action> = {
  ...MESSAGING_ACTIONS,
  ...GROUP_ACTIONS,
  ...CALL_ACTIONS,
};
