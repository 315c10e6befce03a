/**
 * Reconcile's way out to the archive and the stream (#57 item 4): the facts a run applied that
 * changed an item are handed to it. The stream (`shared/stream/reconcile-facts.ts`) archives and
 * publishes them; reconcile only reports what it answers. Absent: neither.
 */

/** A fact reconcile applied, as it is archived and published: its event's body, id and fetch time. */
export interface ReconcileFactRecord {
  appId: string;
  /** A hash of the app, fetch time, uid and status: the id the table's item knows the fact by. */
  eventId: string;
  /** The listing's fetch time (ms): the fact's receipt. */
  receivedAt: number;
  trigger: string;
  /** The event reconcile applied, as a JSON text. */
  body: string;
}

/** Where a reconcile run's facts go besides the table. */
export interface ReconcileFactSink {
  /** Archives the facts one run applied to an app, then publishes them while something listens. */
  record(
    appId: string,
    facts: readonly ReconcileFactRecord[],
  ): Promise<{ published: number; unpublished: number }>;
}
