import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import pLimit from "p-limit";
import { FIGURE_NAMES } from "../../shared/analytics/figures";
import { hoursBegun } from "../../shared/analytics/rollup";
import type { ActivityStore } from "../../shared/analytics/store/activity-store";
import type { AnalyticsQueries } from "../query/queries";
import { expectedActivity } from "./expected-activity";
import { fileSha256 } from "./file-server";
import type { ExpectedApp, GeneratedEvent, GeneratedHistory } from "./generator";

type ExpectedGroup = ExpectedApp["groups"] extends Map<string, infer G> ? G : never;
type ExpectedSession = ExpectedApp["sessions"] extends Map<string, infer S> ? S : never;

/** The access patterns the check reads through. */
export type TableChecks = Pick<AnalyticsQueries, "group" | "members" | "groupsOf" | "online" | "session">;

/** Reads in flight at once: the check reads each item once, and they do not depend on each other. */
const CHECK_READS = 16;

/**
 * Compares the tables with what a generated history implies, through the query layer (the same
 * access patterns the CLI serves). Returns the differences, one line each, in the history's order
 * (app, its groups, who is online, its sessions); empty when all match. The reads run side by
 * side (a simulation of 5,000 events reads about a thousand items). `recordings: false` skips the
 * archived recordings (when no recorder ran).
 */
export async function checkTables(
  history: GeneratedHistory,
  queries: TableChecks,
  options: { recordings?: boolean } = {},
): Promise<string[]> {
  const limit = pLimit(CHECK_READS);
  const recordingBytes = new Map<string, number>();
  for (const e of history.events) {
    if (!e.recording) continue;
    const data = (JSON.parse(e.body) as { data: { sessionId: string } }).data;
    recordingBytes.set(`${e.appId}|${data.sessionId}`, e.recording.bytes);
  }
  const checkGroup = async (appId: string, guid: string, group: ExpectedGroup): Promise<string[]> => {
    const problems: string[] = [];
    const actual = await queries.group(appId, guid);
    if (!actual) return [`${appId} group ${guid}: missing`];
    if (actual.deleted !== group.deleted)
      problems.push(`${appId} group ${guid}: deleted ${actual.deleted}, expected ${group.deleted}`);
    if (group.deleted) return problems;
    if (actual.name !== group.name)
      problems.push(`${appId} group ${guid}: name "${actual.name}", expected "${group.name}"`);
    if (actual.owner !== group.owner)
      problems.push(`${appId} group ${guid}: owner ${actual.owner}, expected ${group.owner}`);
    const members = new Map((await queries.members(appId, guid)).map((m) => [m.uid, m.scope]));
    const groupsOf = await Promise.all([...group.members.keys()].map((uid) => queries.groupsOf(appId, uid)));
    [...group.members].forEach(([uid, scope], i) => {
      if (members.get(uid) !== scope)
        problems.push(`${appId} group ${guid}: member ${uid} scope ${members.get(uid)}, expected ${scope}`);
      if (!groupsOf[i]?.some((m) => m.guid === guid))
        problems.push(`${appId} group ${guid}: not among the groups of its member ${uid}`);
    });
    for (const uid of members.keys()) {
      if (!group.members.has(uid)) problems.push(`${appId} group ${guid}: ${uid} is a member, expected not`);
    }
    return problems;
  };
  const checkOnline = async (appId: string, expected: ReadonlySet<string>): Promise<string[]> => {
    const problems: string[] = [];
    const online = new Set((await queries.online(appId)).map((p) => p.uid));
    for (const uid of expected) if (!online.has(uid)) problems.push(`${appId}: ${uid} should be online`);
    for (const uid of online) if (!expected.has(uid)) problems.push(`${appId}: ${uid} should be offline`);
    return problems;
  };
  const checkSession = async (
    appId: string,
    sessionId: string,
    session: ExpectedSession,
  ): Promise<string[]> => {
    const problems: string[] = [];
    const actual = await queries.session(appId, sessionId);
    if (!actual) return [`${appId} session ${sessionId}: missing`];
    if (actual.kind !== session.kind)
      problems.push(`${appId} session ${sessionId}: kind ${actual.kind}, expected ${session.kind}`);
    // An ended session shows how it ended (a call rejected or ended within the second it was
    // initiated included); one in progress shows no outcome, or that it was initiated.
    const outcome = session.ended ? session.outcome : undefined;
    if (outcome !== undefined ? actual.outcome !== outcome : (actual.outcome ?? "initiated") !== "initiated")
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
    return problems;
  };
  const checks = [...history.expected].flatMap(([appId, expected]) => [
    ...[...expected.groups].map(([guid, group]) => limit(() => checkGroup(appId, guid, group))),
    limit(() => checkOnline(appId, expected.online)),
    ...[...expected.sessions].map(([sessionId, session]) =>
      limit(() => checkSession(appId, sessionId, session)),
    ),
  ]);
  return (await Promise.all(checks)).flat();
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
      // A day computed before its end has the hours begun by then only (today's: up to now).
      const begun = hoursBegun(day, stored.computedAt);
      for (const { hour, figures } of want.hours.filter((h) => h.hour < begun))
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
