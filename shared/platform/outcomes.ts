import { QUARANTINE_SPIKE } from "./constants";
import { FETCH_FAILURE_REASONS, type FetchFailureReason } from "./errors";

/**
 * The outcome vocabularies, one constant array per function. The types, the metrics' `outcome`
 * dimension, the local stack's log tap and the dashboard are all built from these arrays, so an
 * outcome the code emits is always counted and graphed.
 */

/** Why an ingest request ended as it did. */
export const INGEST_OUTCOMES = [
  "accepted",
  "accepted-oversize",
  "unauthorized",
  "forbidden-app",
  "method-not-allowed",
  "payload-too-large",
  "invalid-body",
  "enqueue-failed",
] as const;
export type IngestOutcome = (typeof INGEST_OUTCOMES)[number];

/** Where each event ended (the "nothing lost" counters); `failed` goes back to the queue. */
export const PROJECTOR_OUTCOMES = ["projected", "stale", "archived-only", "quarantined", "failed"] as const;
export type ProjectorOutcome = (typeof PROJECTOR_OUTCOMES)[number];
/** The outcomes of an event that was handled (not `failed`). */
export type ProjectionOutcome = Exclude<ProjectorOutcome, "failed">;

/** What became of a recording job. */
export type RecorderOutcome =
  | "archived"
  | "already-archived"
  | "invalid-job"
  | `failed-${FetchFailureReason}`;
export const RECORDER_OUTCOMES: readonly RecorderOutcome[] = [
  "archived",
  "already-archived",
  "invalid-job",
  ...FETCH_FAILURE_REASONS.map((reason) => `failed-${reason}` as const),
];

/** What a scheduled reconcile did to the users of an app (counts), or that it could not finish. */
export const RECONCILER_OUTCOMES = [
  "set-online",
  "set-offline",
  "unchanged",
  "skipped",
  "incomplete",
  "failed",
] as const;
export type ReconcilerOutcome = (typeof RECONCILER_OUTCOMES)[number];

/** What a scheduled rollup did with a day of an app (`shared/analytics/rollup/day-pass.ts`; unchanged: the same figures as its last pass). */
export const ROLLUP_OUTCOMES = ["written", "superseded", "skipped", "unchanged", "failed"] as const;
export type RollupOutcome = (typeof ROLLUP_OUTCOMES)[number];

/**
 * What became of an accepted fact on its way to the stream (#41), besides its projector outcome:
 * published to the topic, or kept in the stream's own dead-letter queue after its last receive
 * (`unpublished`: "facts not published", redriven by `redrive --stream`). A publish that failed
 * before the last receive is the record's `failed` projector outcome (it is retried).
 */
export const STREAM_OUTCOMES = ["published", "unpublished"] as const;
export type StreamOutcome = (typeof STREAM_OUTCOMES)[number];

/** CloudWatch namespace of every metric the backend emits (dashboards and alarms use it). */
export const METRICS_NAMESPACE = "WebhookBackend";

/** Each function's outcome metric (CloudWatch name, with an `outcome` dimension) and its vocabulary. */
export const OUTCOME_METRICS = {
  ingest: { metric: "IngestRequests", outcomes: INGEST_OUTCOMES },
  projector: { metric: "ProjectorEvents", outcomes: PROJECTOR_OUTCOMES },
  recorder: { metric: "RecorderJobs", outcomes: RECORDER_OUTCOMES },
  reconciler: { metric: "ReconciledUsers", outcomes: RECONCILER_OUTCOMES },
  rollup: { metric: "ActivityRollups", outcomes: ROLLUP_OUTCOMES },
  /** Counted by the projector's publish step under the service name `stream`. */
  stream: { metric: "StreamFacts", outcomes: STREAM_OUTCOMES },
} as const;
export type ServiceName = keyof typeof OUTCOME_METRICS;

/**
 * The projector's per-trigger counts (CloudWatch, with a `trigger` dimension): the events it
 * handled and those it quarantined, for the quarantine-rate alarm. A trigger we do not model is
 * counted as `(other)`, so that the metrics stay one per modelled trigger, whatever a sender makes up.
 */
export const TRIGGER_METRICS = { events: "TriggerEvents", quarantined: "TriggerQuarantined" } as const;
export const OTHER_TRIGGER = "(other)";

/** One trigger's counts over the quarantine-rate window. */
export interface TriggerCounts {
  trigger: string;
  events: number;
  quarantined: number;
}

/**
 * The triggers whose quarantine rate is a spike (`QUARANTINE_SPIKE`), worst first: the console
 * highlights them, as the alarm fires for them.
 *
 * @example quarantineSpikes([{ trigger: "message_edited", events: 40, quarantined: 40 }]) // [{ …, share: 100 }]
 */
export function quarantineSpikes(counts: readonly TriggerCounts[]): Array<TriggerCounts & { share: number }> {
  return counts
    .filter((c) => c.events >= QUARANTINE_SPIKE.minEvents)
    .map((c) => ({ ...c, share: Math.round((1000 * c.quarantined) / c.events) / 10 }))
    .filter((c) => c.share > QUARANTINE_SPIKE.sharePercent)
    .sort((a, b) => b.share - a.share || a.trigger.localeCompare(b.trigger));
}
