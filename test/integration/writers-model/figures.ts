import { ChangeMessageVisibilityCommand } from "@aws-sdk/client-sqs";
import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import { canonicalJson } from "@webhook-backend/stream/projections/canonical-json";
import { documentClient } from "../../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../../shared/adapters/s3-blob-store";
import { duckDbEngine } from "../../../shared/analytics/engines/duckdb-sql-engine";
import { TOP_LIMIT } from "../../../shared/analytics/figures";
import { dayActivity, daysInRange, rollupDays } from "../../../shared/analytics/rollup";
import { dynamoActivityStore } from "../../../shared/analytics/store/dynamo-activity-store";
import { utcDay } from "../../../shared/contracts/bucket-layout";
import { archiveBatch } from "../../../shared/projector/raw-archive";
import { redrive } from "../../../tools/ops/operations";
import { createBucket, testClients, uniqueName } from "../../support/aws";
import { drainEvents, rollupDeps, type Wiring } from "../../support/writers-model/cores";
import { newActor, requestGate } from "../../support/writers-model/gate";
import type { Model } from "../../support/writers-model/model";
import { APPS, actorClients, type Site } from "../../support/writers-model/world";

/*
 * The writers model's figures (issue #50): once a run's steps are done it settles (the clock past
 * every lease's lapse, the events queue drained, every day rolled up for every app by the
 * `rollup` command's core), and each stored day's figures must equal what the model computes from
 * its facts: the acknowledged deliveries, as the platform sent them, in a bucket of their own,
 * read by the same SQL, with each erased uid replaced by its erasure's pseudonym.
 */

/** A wiring outside the scheduler (every step goes at once): what the settling and the checks use. */
function ungated(site: Site, label: string): Wiring {
  const gate = requestGate(() => undefined);
  const actor = newActor(label);
  return { site, gate, actor, clients: actorClients(site, gate, actor) };
}

/**
 * Settles a run: crashed holders' leases lapse (the clock moves 16 minutes), the queue's
 * messages held by a crashed receiver made visible again, the dead letters redriven, and drained,
 * every delivery is then through the projector; every day is rolled up.
 */
export async function settle(m: Model, site: Site): Promise<void> {
  site.clock.now += 16 * 60_000;
  // Athena ends, in time, every query still running (an orphan CTAS too): its files land where they land.
  await site.athena?.endRunning();
  const w = ungated(site, "settle");
  try {
    for (const handle of site.received)
      await w.clients.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: site.queueUrl,
          ReceiptHandle: handle,
          VisibilityTimeout: 0,
        }),
      );
    site.received.clear();
    // The dead letters redriven, as an operator does once the projector's fault is over.
    await redrive(w.clients.sqs, site.stream.deadLetterUrl, site.queueUrl);
    const drained = await drainEvents(w, 20);
    if (drained.failed === 0) for (const d of m.delivered) d.pending = false;
    if (m.delivered.length) await rollupDays(factDays(m, site), rollupDeps(w));
  } finally {
    w.clients.destroy();
  }
}

function factDays(m: Model, site: Site): string[] {
  const first = Math.min(...m.delivered.map((d) => d.receivedAt));
  return daysInRange(utcDay(first), utcDay(site.clock.now));
}

/** Each stored day's figures that differ from the model's, as lines. */
export async function figureViolations(m: Model, site: Site): Promise<string[]> {
  if (!m.delivered.length) return [];
  const { s3, dynamo, destroy } = testClients();
  const found: string[] = [];
  try {
    const reference = await createBucket(s3, uniqueName("wm-ref"));
    const kept = m.delivered.filter(
      (d) => !m.forgottenApps.has(d.app) && !(m.keptFrom && utcDay(d.receivedAt) < m.keptFrom),
    );
    await archiveBatch(
      kept.map((d, i) => ({
        messageId: `ref-${i}`,
        eventId: d.eventId,
        receivedAt: d.receivedAt,
        trigger: d.trigger,
        appId: d.app,
        body: d.body,
      })),
      s3BlobStore(s3, reference),
    );
    const engine = duckDbEngine({ s3, bucket: reference });
    const store = dynamoActivityStore(documentClient(dynamo), site.activityTable);
    for (const app of APPS.filter((a) => !m.forgottenApps.has(a) && !m.forgettingApps.has(a)))
      for (const day of factDays(m, site)) {
        if (m.keptFrom && day < m.keptFrom) continue;
        const expected = pseudonymized(m, app, (await dayActivity(engine, app, day)).activity);
        const stored = await store.day(app, day);
        const got = canonicalJson({
          figures: stored?.figures ?? {},
          topUsers: await store.topUsers(app, day, TOP_LIMIT),
          topGroups: await store.topGroups(app, day, TOP_LIMIT),
        });
        // A day of the app whose deliveries were all refused (quarantined) has no facts: none stored.
        const counted = (d: (typeof kept)[number]) => refusalOf(parseEventBody(d.body)) === undefined;
        if (
          stored === undefined &&
          !kept.some((d) => d.app === app && utcDay(d.receivedAt) === day && counted(d))
        )
          continue;
        // Nothing of the app on the day by event time (a line received after midnight for the day
        // before): no day is stored, and the model's is all zeros.
        if (stored === undefined && isNothing(expected)) continue;
        if (got !== expected) found.push(`figures of ${app} ${day}: ${diff(expected, got)}`);
      }
  } finally {
    destroy();
  }
  return found;
}

/** Whether a day's expected figures are all zero, its top lists empty. */
function isNothing(expected: string): boolean {
  const day = JSON.parse(expected) as {
    figures?: Record<string, unknown>;
    topUsers?: unknown[];
    topGroups?: unknown[];
  };
  return (
    Object.values(day.figures ?? {}).every((v) => v === 0) && !day.topUsers?.length && !day.topGroups?.length
  );
}

/** The figures of the facts, each erased uid of the app written as its pseudonym. */
function pseudonymized(
  m: Model,
  app: string,
  activity: Awaited<ReturnType<typeof dayActivity>>["activity"],
): string {
  let text = JSON.stringify({
    figures: activity.figures,
    topUsers: activity.topUsers,
    topGroups: activity.topGroups,
  });
  for (const e of m.erasures.filter((x) => x.app === app))
    text = text.replaceAll(`"${e.uid}"`, `"${e.pseudonym}"`);
  const named = JSON.parse(text) as { topUsers: Array<{ uid: string; messages: number }> };
  // Ties rank by id (`7-top-lists.sql`), and the stored day was ranked over the redacted archive:
  // by pseudonym, not by the uid it replaced (two erased users of one count: #50 defect 2's
  // sequence). The model has far fewer users than TOP_LIMIT, so no tie falls at the cut.
  named.topUsers.sort((a, b) => b.messages - a.messages || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  return canonicalJson(named);
}

/** The first keys whose values differ between two canonical JSON texts (figures and top lists). */
function diff(expected: string, got: string): string {
  const a = JSON.parse(expected) as Record<string, unknown>;
  const b = JSON.parse(got) as Record<string, unknown>;
  const out: string[] = [];
  const fa = (a.figures ?? {}) as Record<string, unknown>;
  const fb = (b.figures ?? {}) as Record<string, unknown>;
  for (const key of new Set([...Object.keys(fa), ...Object.keys(fb)]))
    if (JSON.stringify(fa[key]) !== JSON.stringify(fb[key]))
      out.push(`${key} ${fa[key]} (model) != ${fb[key]} (stored)`);
  for (const list of ["topUsers", "topGroups"])
    if (JSON.stringify(a[list]) !== JSON.stringify(b[list]))
      out.push(`${list} ${JSON.stringify(a[list])} (model) != ${JSON.stringify(b[list])} (stored)`);
  return out.slice(0, 6).join("; ");
}
