/**
 * What `query activity` is asked and what it answers: the view's options (which view, the range,
 * now and the grace period), its result (the `--json` value, the wide table's rows, the text
 * lines), and the grace period every view closes a day by.
 */

export interface ActivityViewOptions {
  app: string;
  from: string;
  to: string;
  hourly?: boolean;
  top?: "groups" | "users";
  /** The calls and meetings that ended: by duration, and their participants (#33). */
  calls?: boolean;
  /** First-response, delivery and read times: counts and percentiles, in seconds (#33). */
  latency?: boolean;
  /** The most users online, and calls in progress, at once per weekday and hour over the range (#33). */
  heatmap?: boolean;
  /** DAU, WAU, MAU, stickiness and new users per day, from the closed days' user sets (#33). */
  users?: boolean;
  /** New users' D+1, D+7, D+30 retention per day, and the weekly cohorts (#33). */
  retention?: boolean;
  /** Groups created and deleted, members in and out, members at the start and end, churn, average size (#33). */
  groups?: boolean;
  limit: number;
  /** Every figure in one table per view, however wide (the text output; `json` is the same either way). */
  wide?: boolean;
  /** Now (ms): what is closed yet. Default: the clock. */
  now?: number;
  /** The rollup's grace period: a day closes this long after its end (default `DEFAULT_GRACE_MINUTES`). */
  graceMinutes?: number;
  /** What the commands a note suggests need to reach the same stack (` --stack prod`); default none. */
  targetArgs?: string;
}

/** What `query activity` prints: its `--json` value, the table's rows (`--wide`), and the text lines. */
export interface ActivityViewResult {
  json: unknown;
  rows: Row[];
  lines: string[];
}

export type Row = Record<string, unknown>;

/**
 * The rollup's grace period unless a deployment chose another (`activityGraceMinutes`,
 * `rollup --grace-minutes`, the local stack's timer): a day is final, and its day sets written,
 * this long after its end.
 */
export const DEFAULT_GRACE_MINUTES = 120;
