// `query activity`'s views from stored days in memory, for the tests that read what it prints
// (test/unit/activity-view and activity-view-day-sets): the activity table and the day sets in
// memory, a day as the rollup stores it, and what the CLI prints of a view.
import { FIGURE_NAMES, type Figures } from "../../shared/analytics/figures";
import type { ActivityStore, StoredDay } from "../../shared/analytics/store/activity-store";
import type { UserSetStore } from "../../shared/analytics/user-sets";
import type { BlobStore } from "../../shared/ports/blob-store";
import type { ActivityViewOptions } from "../../tools/analytics/activity-view/options";
import { activityView } from "../../tools/analytics/activity-view/view";
import { tableLines } from "../../tools/cli/format";

export const APP = "app-1";

export const figures = (values: Partial<Figures>): Figures =>
  ({ ...Object.fromEntries(FIGURE_NAMES.map((f) => [f, 0])), ...values }) as Figures;

/** A day as the rollup stores it: busy figures (wide numbers), computed at noon the next day. */
export function storedDay(day: string, final: boolean, values: Partial<Figures> = {}): StoredDay {
  return {
    appId: APP,
    day,
    figures: figures({
      messages: 1_234_567,
      active_users: 45_678,
      active_senders: 40_000,
      peak_online: 12_345,
      calls_audio: 3_456,
      calls_video: 789,
      calls_started: 3_900,
      call_seconds: 9_876_543,
      meeting_seconds: 1_234_567,
      recordings: 321,
      calls_ended: 17,
      meetings_ended: 21,
      sessions_ended: 38,
      sessions_under_1m: 15,
      sessions_1_5m: 19,
      sessions_5_15m: 4,
      call_participants: 10,
      meeting_participants: 48,
      peak_calls: 1_234,
      first_responses: 62,
      first_response_p50_ms: 1_083_000,
      read_latencies: 175,
      read_latency_p99_ms: 4_474_000,
      ...values,
    }),
    messageKinds: {},
    platforms: { javascript: 30_000, web: 29_000, ios: 28_000, android: 27_000 },
    computedAt: Date.parse(`${day}T12:00:00Z`) + 86_400_000,
    final,
    bytesScanned: 1,
  };
}

/** The activity table in memory: these days, each hour with the day's figures (`begun`: a day's hours stored, 24 unless said). */
export function memoryStore(days: StoredDay[], begun: Record<string, number> = {}): ActivityStore {
  return {
    day: async (_app, day) => days.find((d) => d.day === day),
    days: async (_app, from, to) => days.filter((d) => d.day >= from && d.day <= to),
    hours: async (_app, day) => {
      const d = days.find((x) => x.day === day);
      return d
        ? Array.from({ length: begun[day] ?? 24 }, (_, hour) => ({
            hour,
            figures: { ...d.figures, peak_online: 100 * hour + 7 },
          }))
        : [];
    },
    topGroups: async () => [{ groupId: "group-with-a-long-id-1", messages: 9, activeMembers: 3 }],
    topUsers: async () => [{ uid: "user-1", messages: 9 }],
    replace: async () => true,
  };
}

/** The data bucket's day sets in memory, read back through the same encoding. */
export function memorySets(): UserSetStore {
  const objects = new Map<string, Uint8Array>();
  const missing = (key: string) => Object.assign(new Error(`no ${key}`), { name: "NoSuchKey" });
  const blobs: BlobStore = {
    bucket: "memory",
    put: async (key, body) => {
      const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
      objects.set(key, bytes);
      return { bucket: "memory", key, size: bytes.length };
    },
    getBytes: async (key) => {
      const bytes = objects.get(key);
      if (!bytes) throw missing(key);
      return bytes;
    },
    getText: async (key) => {
      const bytes = objects.get(key);
      if (!bytes) throw missing(key);
      return new TextDecoder().decode(bytes);
    },
    getBytesIfPresent: async (key) => objects.get(key),
  };
  return { blobs, list: async (prefix) => [...objects.keys()].filter((k) => k.startsWith(prefix)).sort() };
}

/** What the CLI prints of a view: its text lines (before #42, the rows as one table). */
export async function printed(store: ActivityStore, o: Partial<ActivityViewOptions>, sets?: UserSetStore) {
  const view = await activityView(
    store,
    { app: APP, from: "2026-03-02", to: "2026-03-03", limit: 10, ...o },
    sets,
  );
  return { view, lines: (view as { lines?: string[] }).lines ?? tableLines(view.rows) };
}

export const width = (line: string) => [...line].length;

/** The text as one line of words: sentences wrapped at the terminal's width read whole. */
export const prose = (lines: readonly string[]) => lines.join(" ").replace(/\s+/g, " ");
