import { FIGURE_NAMES } from "../../shared/analytics/figures";
import type { ActivityStore } from "../../shared/analytics/store/activity-store";
import { canonicalJson } from "../../shared/projections/canonical-json";
import type { AnalyticsQueries } from "../query/queries";
import { expectedActivity } from "./expected-activity";
import { fileSha256 } from "./file-server";
import type { GeneratedEvent, GeneratedHistory } from "./generator";

/** The access patterns the check reads through. */
export type TableChecks = Pick<AnalyticsQueries, "group" | "members" | "groupsOf" | "online" | "session">;

/**
 * Compares the tables with what a generated history implies, through the query layer (the same
 * access patterns the CLI serves). Returns the differences, one line each; empty when all match.
 * `recordings: false` skips the archived recordings (when no recorder ran).
 */
export async function checkTables(
  history: GeneratedHistory,
  queries: TableChecks,
  options: { recordings?: boolean } = {},
): Promise<string[]> {
  const problems: string[] = [];
  const recordingBytes = new Map<string, number>();
  for (const e of history.events) {
    if (!e.recording) continue;
    const data = (JSON.parse(e.body) as { data: { sessionId: string } }).data;
    recordingBytes.set(`${e.appId}|${data.sessionId}`, e.recording.bytes);
  }
  for (const [appId, expected] of history.expected) {
    for (const [guid, group] of expected.groups) {
      const actual = await queries.group(appId, guid);
      if (!actual) {
        problems.push(`${appId} group ${guid}: missing`);
        continue;
      }
      if (actual.deleted !== group.deleted)
        problems.push(`${appId} group ${guid}: deleted ${actual.deleted}, expected ${group.deleted}`);
      if (group.deleted) continue;
      if (actual.name !== group.name)
        problems.push(`${appId} group ${guid}: name "${actual.name}", expected "${group.name}"`);
      if (actual.owner !== group.owner)
        problems.push(`${appId} group ${guid}: owner ${actual.owner}, expected ${group.owner}`);
      const members = new Map((await queries.members(appId, guid)).map((m) => [m.uid, m.scope]));
      for (const [uid, scope] of group.members) {
        if (members.get(uid) !== scope)
          problems.push(`${appId} group ${guid}: member ${uid} scope ${members.get(uid)}, expected ${scope}`);
        if (!(await queries.groupsOf(appId, uid)).some((m) => m.guid === guid))
          problems.push(`${appId} group ${guid}: not among the groups of its member ${uid}`);
      }
      for (const uid of members.keys()) {
        if (!group.members.has(uid))
          problems.push(`${appId} group ${guid}: ${uid} is a member, expected not`);
      }
    }
    const online = new Set((await queries.online(appId)).map((p) => p.uid));
    for (const uid of expected.online)
      if (!online.has(uid)) problems.push(`${appId}: ${uid} should be online`);
    for (const uid of online)
      if (!expected.online.has(uid)) problems.push(`${appId}: ${uid} should be offline`);
    for (const [sessionId, session] of expected.sessions) {
      const actual = await queries.session(appId, sessionId);
      if (!actual) {
        problems.push(`${appId} session ${sessionId}: missing`);
        continue;
      }
      if (actual.kind !== session.kind)
        problems.push(`${appId} session ${sessionId}: kind ${actual.kind}, expected ${session.kind}`);
      // An ended session shows how it ended (a call rejected or ended within the second it was
      // initiated included); one in progress shows no outcome, or that it was initiated.
      const outcome = session.ended ? session.outcome : undefined;
      if (
        outcome !== undefined ? actual.outcome !== outcome : (actual.outcome ?? "initiated") !== "initiated"
      )
        problems.push(
          `${appId} session ${sessionId}: outcome ${actual.outcome}, expected ${outcome ?? "initiated"}`,
        );
      const stints = Object.keys(actual.participants ?? {}).length;
      if (stints !== session.stints)
        problems.push(
          `${appId} session ${sessionId}: ${stints} participant stints, expected ${session.stints}`,
        );
      // A recorded session has its transcript too (transcription_generated, attached like the recording).
      const transcripts = Object.keys(actual.transcripts ?? {}).length;
      if (transcripts !== session.recordings)
        problems.push(
          `${appId} session ${sessionId}: ${transcripts} transcripts, expected ${session.recordings}`,
        );
      const bytes = recordingBytes.get(`${appId}|${sessionId}`);
      if (bytes !== undefined && options.recordings !== false) {
        const recording = Object.values(actual.recordings ?? {})[0];
        if (recording?.status !== "archived")
          problems.push(`${appId} session ${sessionId}: recording ${recording?.status ?? "missing"}`);
        else if (recording.size !== bytes || recording.sha256 !== (await fileSha256(bytes)))
          problems.push(`${appId} session ${sessionId}: archived recording differs from the source`);
      }
    }
  }
  return problems;
}

/**
 * Compares the activity table with the figures a history implies (`expectedActivity`), day by
 * day: every figure, every hour, the top groups and users. `receivedAt` gives each event's first
 * receipt (events without a payload time fall on it). Returns the differences, one line each.
 */
export async function checkActivity(
  history: GeneratedHistory,
  store: ActivityStore,
  receivedAt: (e: GeneratedEvent) => number,
): Promise<string[]> {
  const problems: string[] = [];
  for (const [appId, days] of expectedActivity(history.events, receivedAt)) {
    for (const [day, want] of days) {
      const stored = await store.day(appId, day);
      if (!stored) {
        problems.push(`${appId} ${day}: no activity item`);
        continue;
      }
      for (const name of FIGURE_NAMES)
        if (stored.figures[name] !== want.figures[name])
          problems.push(`${appId} ${day}: ${name} ${stored.figures[name]}, expected ${want.figures[name]}`);
      const hours = await store.hours(appId, day);
      for (const { hour, figures } of want.hours)
        for (const name of FIGURE_NAMES) {
          const got = hours.find((h) => h.hour === hour)?.figures[name];
          if (got !== figures[name])
            problems.push(`${appId} ${day} hour ${hour}: ${name} ${got}, expected ${figures[name]}`);
        }
      const top = JSON.stringify(await store.topUsers(appId, day, 25));
      if (top !== JSON.stringify(want.topUsers)) problems.push(`${appId} ${day}: top users ${top}`);
      const groups = JSON.stringify(await store.topGroups(appId, day, 25));
      if (groups !== JSON.stringify(want.topGroups)) problems.push(`${appId} ${day}: top groups ${groups}`);
      for (const [what, got, expected] of [
        ["message kinds", stored.messageKinds, want.messageKinds],
        ["platforms", stored.platforms, want.platforms],
      ] as const)
        if (canonicalJson(got) !== canonicalJson(expected))
          problems.push(
            `${appId} ${day}: ${what} ${canonicalJson(got)}, expected ${canonicalJson(expected)}`,
          );
    }
  }
  return problems;
}
