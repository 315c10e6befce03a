import type { DayActivity, Figures, GroupActivity, UserActivity } from "../figures";

/** A day's figures as stored: with when they were computed and whether the day is final. */
export interface StoredDay {
  appId: string;
  day: string;
  figures: Figures;
  messageKinds: Record<string, number>;
  /** Distinct users with a presence fact from each client platform. */
  platforms: Record<string, number>;
  /** When the run that wrote them started (ms): every fact archived before is counted. */
  computedAt: number;
  /** Computed after the day's end plus the grace period: later runs skip it. */
  final: boolean;
  /** Bytes of the archive the run read. */
  bytesScanned: number;
}

/** What a rollup writes for one day. */
export interface DayWrite extends DayActivity {
  appId: string;
  day: string;
  computedAt: number;
  final: boolean;
  bytesScanned: number;
}

/**
 * The activity table (`ACTIVITY_TABLE`). Adapter: `./dynamo-activity-store`.
 * Each read is one Query (or GetItem); a day is replaced at once, never written in part.
 */
export interface ActivityStore {
  day(appId: string, day: string): Promise<StoredDay | undefined>;
  /** The stored days of an app from `from` to `to` (inclusive), oldest first. */
  days(appId: string, from: string, to: string): Promise<StoredDay[]>;
  hours(appId: string, day: string): Promise<Array<{ hour: number; figures: Figures }>>;
  topGroups(appId: string, day: string, limit: number): Promise<GroupActivity[]>;
  topUsers(appId: string, day: string, limit: number): Promise<UserActivity[]>;
  /**
   * Replaces a day: its figures, hours and top lists in one transaction (items that did not change
   * are not rewritten; ranks no longer held are deleted). A write computed before the stored one
   * is refused: returns false.
   */
  replace(write: DayWrite): Promise<boolean>;
}
