import type { SessionState } from "@webhook-backend/stream/projections/sessions";
import { dynamoItemStore } from "../../../shared/adapters/dynamo-item-store";
import { loadRecorderConfig } from "../../../shared/config/function-config";
import { SESSIONS_TABLE } from "../../../shared/platform/tables";
import type { RecorderDependencies } from "../../../shared/recorder/archive";
import { recordSqsBatch } from "../../../shared/recorder/batch";
import { systemResolver } from "../../../shared/recorder/safe-fetch";
import { recordingApiKeySource } from "../../../shared/recorder/secret-api-keys";
import { drainQueue, silent, type Wiring } from "./cores";

/*
 * The recorder as the writers model wires it (issue #50): its real core (`recordSqsBatch`) as
 * functions/recorder/handler.ts wires it, its configuration read by the same function from the
 * local stack's variables (http to the world's file server allowed), over the actor's gated
 * clients, its clock the run's; the recordings queue drained as Lambda's event source mapping does.
 */

/** The recorder's dependencies over the actor's clients (the handler's, with the local stack's variables). */
export function recorderDeps(w: Wiring): RecorderDependencies {
  const config = loadRecorderConfig({
    SESSIONS_TABLE: w.site.tables.sessions,
    DATA_BUCKET: w.site.bucket,
    RECORDER_ALLOW_HTTP: "true",
    RECORDER_ALLOWED_HOSTS: "127.0.0.1",
    RECORDER_API_KEY_HOSTS: "127.0.0.1",
  });
  return {
    s3: w.clients.s3,
    bucket: config.dataBucket,
    sessions: dynamoItemStore<SessionState>(w.clients.doc, SESSIONS_TABLE, config.sessionsTable),
    apiKeyFor: recordingApiKeySource(config.apiKeys, () => w.clients.secrets),
    resolver: systemResolver,
    allowHttp: config.allowHttp,
    allowedHosts: config.allowedHosts,
    apiKeyHosts: config.apiKeyHosts,
    limits: config.limits,
    now: () => w.site.clock.now,
  };
}

/**
 * The recordings queue drained through the recorder's batch handler: batches of up to 10, the
 * records it reports failed made visible again (a crashed drain's messages stay in flight: the
 * erasure counts them as the queue's). Returns how many it handled and how many failed.
 */
export function drainRecordings(w: Wiring, rounds = 3): Promise<{ handled: number; failed: number }> {
  return drainQueue(
    w,
    { url: w.site.recordings.queueUrl, arn: "arn:aws:sqs:us-east-1:000000000000:recordings" },
    (records) => recordSqsBatch({ Records: records }, undefined, recorderDeps(w), silent()),
    rounds,
  );
}
