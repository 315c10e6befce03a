import * as z from "zod/mini";
import { EVENTS_QUEUE, RECORDINGS_QUEUE } from "../shared/platform/queues";

/**
 * The deployment's settings, read from CDK context (`cdk.json` or `-c key=value`). Every field
 * has a safe default; the README lists them with a worked `cdk deploy` example.
 */
const contextSchema = z.object({
  /** Name of the stage: part of the stack name and of every resource's logical scope. */
  stage: z._default(z.string().check(z.regex(/^[a-z][a-z0-9-]{0,20}$/)), "prod"),
  /** App ids this deployment accepts (empty: any app the credentials allow). */
  allowedAppIds: z._default(z.array(z.string()), []),
  /** Import an existing credentials secret instead of creating one. */
  credentialsSecretArn: z.optional(z.string()),
  /** A secret `{"<appId>":"<apiKey>"}` for token-protected recording downloads. */
  recordingApiKeysSecretArn: z.optional(z.string()),
  /** Where alarms are e-mailed (none: subscribe to the topic yourself). */
  alarmEmail: z.optional(z.string()),
  logRetentionDays: z._default(z.number(), 30),
  /** Days before raw archive and quarantine objects move to Infrequent Access, then to Glacier IR. */
  archiveInfrequentAccessDays: z._default(z.number(), 30),
  archiveGlacierDays: z._default(z.number(), 180),
  throttleRateLimit: z._default(z.number(), 500),
  throttleBurstLimit: z._default(z.number(), 1000),
  eventsMaxReceiveCount: z._default(z.number(), EVENTS_QUEUE.maxReceiveCount),
  recordingsMaxReceiveCount: z._default(z.number(), RECORDINGS_QUEUE.maxReceiveCount),
  projectorBatchSize: z._default(z.number(), EVENTS_QUEUE.batchSize),
  projectorBatchingWindowSeconds: z._default(z.number(), EVENTS_QUEUE.batchingWindowSeconds),
  /** One folded invocation sustains ~1,000 events/s (bench:projector): 5 drain 10x the default API rate. */
  projectorMaxConcurrency: z._default(z.number(), 5),
  recorderMaxConcurrency: z._default(z.number(), 5),
  maxRecordingBytes: z._default(z.number(), 5 * 1024 ** 3),
  /**
   * Reconcile presence with the platform's user listing every this many minutes (off when unset):
   * the apps of `reconcileApps`, with their keys from `recordingApiKeysSecretArn`.
   */
  reconcileEveryMinutes: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(1440))),
  /** `{"<appId>": "us" | "eu" | "in"}`: the apps the schedule reconciles, and the region of each. */
  reconcileApps: z._default(z.record(z.string(), z.enum(["us", "eu", "in"])), {}),
  /** Alarm when the oldest message of a queue is older than this many seconds. */
  queueAgeAlarmSeconds: z._default(z.number(), 300),
  /** Alarm when more than this percentage of requests answer 5xx over 5 minutes. */
  api5xxAlarmPercent: z._default(z.number(), 1),
});

export type DeploymentConfig = z.infer<typeof contextSchema>;

/** Reads the configuration from a context getter (`node.tryGetContext`). */
export function readDeploymentConfig(get: (key: string) => unknown): DeploymentConfig {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(contextSchema.shape)) {
    let value = get(key);
    // `-c key=value` gives strings: accept JSON for lists, maps and numbers.
    if (typeof value === "string" && /^[[{\d]/.test(value)) {
      try {
        value = JSON.parse(value);
      } catch {
        // keep the string; the schema will name the problem
      }
    }
    if (value !== undefined) raw[key] = value;
  }
  const parsed = contextSchema.safeParse(raw);
  if (!parsed.success) {
    throw new Error(
      `invalid CDK context: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  return parsed.data;
}
