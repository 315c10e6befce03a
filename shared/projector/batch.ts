import { MetricUnit } from "@aws-lambda-powertools/metrics";
import { ContractViolationError } from "@webhook-backend/stream/errors";
import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import type { ParsedEvent } from "@webhook-backend/stream/events/schemas";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { errorSummary } from "../platform/errors";
import { metricTrigger } from "../platform/metric-trigger";
import { countOutcome, type Observability } from "../platform/observability";
import { type ProjectionOutcome, type ProjectorOutcome, TRIGGER_METRICS } from "../platform/outcomes";
import { processSqsBatch } from "../platform/sqs-batch";
import { type ProjectorDependencies, projectBatch } from "./core";
import type { AcceptedRecord, FactStream } from "./fact-stream";
import { decodeRecord, type QueuedEvent, undecodableRecord } from "./queued-event";
import { archiveBatch, quarantine } from "./raw-archive";

/**
 * The erasure's hook in the batch (#50): each delivery that names a user erased after it was
 * received, redacted (and marked with the erasure) before it is archived, projected or published;
 * the others as they are (the same objects). The handler fills it (`shared/erasure/in-flight.ts`).
 */
export type InFlightRedaction = (events: readonly QueuedEvent[]) => Promise<QueuedEvent[]>;

/** What a batch needs: the fold's dependencies, and the erasure's hook. */
export interface BatchDependencies extends ProjectorDependencies {
  /** Unset: every delivery is projected as received. */
  redactErased?: InFlightRedaction;
}

type Decoded =
  | { event: QueuedEvent }
  | { violation: QueuedEvent; error: ContractViolationError }
  | { error: unknown };
type Result = { outcome: ProjectionOutcome } | { error: unknown };

/** Decodes every record at once (oversize bodies are read from S3 in parallel). */
async function decodeAll(records: readonly SQSRecord[], deps: ProjectorDependencies) {
  const decoded = new Map<string, Decoded>();
  await Promise.all(
    records.map(async (record) => {
      try {
        decoded.set(record.messageId, { event: await decodeRecord(record, deps.dataStore) });
      } catch (error) {
        decoded.set(
          record.messageId,
          error instanceof ContractViolationError
            ? { violation: undecodableRecord(record), error }
            : { error },
        );
      }
    }),
  );
  return decoded;
}

/**
 * The decoded events redacted in flight (`redactErased`), in place; a redacted oversize body is
 * written over the ingest's object too, which the stream's message points at. Returns, for each
 * redacted event that was refused as received, that refusal (its parse): the redaction may remove
 * what the schema refused (a malformed avatar), and a delivery refused as the platform sent it
 * stays refused (quarantined, with the erasure's mark), as the erasure leaves a refused line
 * (`rederivedLine`, `replay --quarantine`).
 */
async function redactInFlight(
  decoded: Map<string, Decoded>,
  deps: BatchDependencies,
): Promise<Map<QueuedEvent, ParsedEvent>> {
  const refusedAsReceived = new Map<QueuedEvent, ParsedEvent>();
  const redact = deps.redactErased;
  if (!redact) return refusedAsReceived;
  const entries = [...decoded].flatMap(([id, d]) => ("event" in d ? [[id, d.event] as const] : []));
  const redacted = await redact(entries.map(([, event]) => event));
  await Promise.all(
    entries.map(async ([id, event], i) => {
      const next = redacted[i];
      if (!next || next === event) return;
      let final = next;
      const asReceived = parseEventBody(event.body);
      const refusal = refusalOf(asReceived);
      if (refusal !== undefined) {
        // Its reason redacted as its body (the marks are cached: no read).
        const [again] = await redact([{ ...event, refusal }]);
        final = { ...next, refusal: again?.refusal ?? "refused" };
        refusedAsReceived.set(final, asReceived);
      }
      if (final.bodyKey)
        await deps.dataStore.put(final.bodyKey, final.body, { contentType: "application/json" });
      decoded.set(id, { event: final });
    }),
  );
  return refusedAsReceived;
}

/** Each record's result: the fold's for the decoded events, quarantine for contract violations. */
async function resultsOf(
  decoded: Map<string, Decoded>,
  deps: ProjectorDependencies,
  parsedOf: ReadonlyMap<QueuedEvent, ParsedEvent>,
): Promise<Map<string, Result>> {
  const results = new Map<string, Result>();
  const events: QueuedEvent[] = [];
  await Promise.all(
    [...decoded].map(async ([messageId, entry]) => {
      if ("event" in entry) events.push(entry.event);
      else if ("violation" in entry) {
        try {
          await quarantine(entry.violation, entry.error.message, deps.dataStore, deps.now);
          results.set(messageId, { outcome: "quarantined" });
        } catch (error) {
          results.set(messageId, { error });
        }
      } else results.set(messageId, { error: entry.error });
    }),
  );
  const folded = await projectBatch(
    events,
    deps,
    events.map((e) => parsedOf.get(e) ?? parseEventBody(e.body)),
  );
  events.forEach((event, i) => {
    results.set(event.messageId, folded[i] ?? { error: new Error("no result") });
  });
  return results;
}

/**
 * Hands the batch's accepted records (projected, archived-only, stale) to the stream, after the
 * tables: a record whose publish failed fails (its tables are written; it comes back `stale` and
 * is published then). Returns what became of each record published or kept unpublished.
 */
async function publishAccepted(
  records: readonly SQSRecord[],
  decoded: Map<string, Decoded>,
  results: Map<string, Result>,
  parsedOf: ReadonlyMap<QueuedEvent, ParsedEvent>,
  stream: FactStream | undefined,
): Promise<Map<string, "published" | "unpublished">> {
  const statuses = new Map<string, "published" | "unpublished">();
  const accepted: AcceptedRecord[] = [];
  for (const record of stream ? records : []) {
    const entry = decoded.get(record.messageId);
    const result = results.get(record.messageId);
    if (!entry || !("event" in entry) || !result || "error" in result || result.outcome === "quarantined")
      continue;
    accepted.push({
      messageId: record.messageId,
      receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? 1),
      event: entry.event,
      parsed: parsedOf.get(entry.event) ?? parseEventBody(entry.event.body),
      outcome: result.outcome,
    });
  }
  if (!stream || accepted.length === 0) return statuses;
  for (const [messageId, result] of await stream.publishAccepted(accepted)) {
    if ("error" in result) results.set(messageId, { error: result.error });
    else statuses.set(messageId, result.stream);
  }
  return statuses;
}

/**
 * One SQS batch of the events queue, folded:
 * 1. decode every record (resolving oversize pointers); a message that breaks its contract is
 *    quarantined (it will never become valid), a body that cannot be read yet is retried; a
 *    delivery naming a user erased since it was received is redacted (`redactErased`, #50);
 * 2. archive the decoded events raw to S3 (one object per app and day) — if that fails the
 *    whole batch fails and SQS redelivers it: nothing is projected that is not archived;
 * 3. fold the batch into the tables (`projectBatch`): each item read once and written at most
 *    once, whatever the number of its events;
 * 4. publish every accepted record to the stream of facts (`deps.stream`, #41), after the
 *    tables: a failed publish fails its record alone (on its last receive the stream keeps it in
 *    its own dead-letter queue instead);
 * 5. report each record (`processSqsBatch`): a record fails, and only it is retried, when an
 *    item it touches failed or its publish did.
 * Logs one line per batch (INFO), one per failed record (WARN), one per event at DEBUG (with
 * `stream: "published" | "unpublished"` when it went out, which the local stack counts); counts
 * outcomes and the write units the batch consumed once per batch, and per trigger in the batch
 * the events handled and quarantined (`TRIGGER_METRICS`, for the quarantine-rate alarm).
 *
 * @example export const handler = (event, context) => projectSqsBatch(event, context, deps, obs)
 */
export async function projectSqsBatch(
  event: SQSEvent,
  context: Context | undefined,
  deps: BatchDependencies,
  { logger, metrics }: Observability,
  capacity: { writeUnits: number; readUnits: number } = { writeUnits: 0, readUnits: 0 },
): Promise<SQSBatchResponse> {
  const started = Date.now();
  const before = { ...capacity };
  const decoded = await decodeAll(event.Records, deps);
  const refusedAsReceived = await redactInFlight(decoded, deps);
  const events = [...decoded.values()].flatMap((d) => ("event" in d ? [d.event] : []));
  // Each body is parsed and validated once, for the archive lines and the fold alike.
  const parsed = events.map((e) => refusedAsReceived.get(e) ?? parseEventBody(e.body));
  if (events.length > 0) await archiveBatch(events, deps.dataStore, parsed);
  const parsedOf = new Map(events.map((e, i) => [e, parsed[i] as ParsedEvent]));
  const results = await resultsOf(decoded, deps, parsedOf);
  const streamed = await publishAccepted(event.Records, decoded, results, parsedOf, deps.stream);

  const counts: Partial<Record<ProjectorOutcome, number>> = {};
  const byTrigger = new Map<string, { events: number; quarantined: number }>();
  const recordHandler = async (record: SQSRecord): Promise<ProjectorOutcome> => {
    const entry = decoded.get(record.messageId);
    // An undecoded record is still filed under what its attributes say (unchecked: for the log only).
    const queued = entry && "event" in entry ? entry.event : undecodableRecord(record);
    const fields = {
      trigger: queued.trigger,
      appId: queued.appId,
      eventId: queued.eventId,
      messageId: record.messageId,
    };
    const result = results.get(record.messageId) ?? { error: new Error("record was not handled") };
    if ("error" in result) {
      counts.failed = (counts.failed ?? 0) + 1;
      logger.warn("event failed; SQS will retry it", {
        ...fields,
        outcome: "failed",
        error: errorSummary(result.error),
      });
      throw result.error;
    }
    counts[result.outcome] = (counts[result.outcome] ?? 0) + 1;
    const perTrigger = byTrigger.get(metricTrigger(queued.trigger)) ?? { events: 0, quarantined: 0 };
    perTrigger.events++;
    if (result.outcome === "quarantined") perTrigger.quarantined++;
    byTrigger.set(metricTrigger(queued.trigger), perTrigger);
    const stream = streamed.get(record.messageId);
    logger.debug("event", { ...fields, outcome: result.outcome, ...(stream ? { stream } : {}) });
    return result.outcome;
  };
  const response = await processSqsBatch(event, context, recordHandler, logger);
  for (const [outcome, n] of Object.entries(counts) as Array<[ProjectorOutcome, number]>)
    countOutcome(metrics, "projector", outcome, n);
  // Per trigger, for the quarantine-rate alarm: a metric line per trigger in the batch, and one
  // more only when some were quarantined (a missing value is no breach).
  for (const [trigger, n] of byTrigger) {
    const counts: Array<readonly [string, number]> = [[TRIGGER_METRICS.events, n.events]];
    if (n.quarantined > 0) counts.push([TRIGGER_METRICS.quarantined, n.quarantined]);
    for (const [name, value] of counts) {
      const single = metrics.singleMetric();
      single.addDimension("trigger", trigger);
      single.addMetric(name, MetricUnit.Count, value);
    }
  }
  const writeUnits = capacity.writeUnits - before.writeUnits;
  const readUnits = capacity.readUnits - before.readUnits;
  const single = metrics.singleMetric();
  single.addMetric("ProjectorWriteUnits", MetricUnit.Count, writeUnits);
  single.addMetric("ProjectorReadUnits", MetricUnit.Count, readUnits);
  logger.info("batch", {
    records: event.Records.length,
    outcomes: counts,
    writeUnits,
    readUnits,
    durationMs: Date.now() - started,
  });
  return response;
}
