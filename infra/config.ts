import { ENGLISH } from "@webhook-backend/stream/parse";
import * as z from "zod/mini";
import { DEFAULT_RECORDING_API_KEY_HOSTS, HOST_NAME_PATTERN } from "../shared/platform/constants";
import { EVENTS_QUEUE, RECORDINGS_QUEUE } from "../shared/platform/queues";
import { streamSubscribersSchema } from "../shared/stream/subscribers";
import { arn, int, wholeNumber } from "./config-schema";
import { CAPACITY_DEFAULTS, type TableCapacity } from "./constructs/projection-tables";
import { domainProblems, PRODUCTION_KEYS, replicaProblems } from "./production-config";

/**
 * The deployment's settings, read from CDK context (`cdk.json` or `-c key=value`). Every field
 * has a safe default; docs/deploy.md lists them with a worked `cdk deploy` example. The schema is
 * strict: a key it does not know is an error that names the closest one it does.
 */
const contextSchema = z.strictObject({
  /** Name of the stage: part of the stack name and of every resource's logical scope. */
  stage: z._default(
    z
      .string()
      .check(z.regex(/^[a-z][a-z0-9-]{0,20}$/, "expected lower-case letters, digits and -, up to 21")),
    "prod",
  ),
  /**
   * Accept only the apps allowed in the apps table (others: 403): `connect` allows each app it
   * connects. Default: on when `allowedAppIds` is given, else off (any app the credentials allow).
   */
  restrictApps: z.optional(z.boolean()),
  /**
   * App ids written as allowed into the apps table at deploy (a seed; turns `restrictApps` on).
   * The table holds any number; this key, kept in the template, suits a few hundred.
   */
  allowedAppIds: z._default(z.array(z.string().check(z.minLength(1))), []),
  /** Import an existing credentials secret instead of creating one. */
  credentialsSecretArn: z.optional(arn("secretsmanager")),
  /** A secret `{"<appId>":"<apiKey>"}` for token-protected recording downloads (and reconcile). */
  recordingApiKeysSecretArn: z.optional(arn("secretsmanager")),
  /**
   * The hosts (and their subdomains) a recording download may send the app's API key to: the
   * platform's own. A `recording_url` naming any other host is fetched without the key.
   */
  recordingApiKeyHosts: z._default(
    z.array(
      z.string().check(z.regex(HOST_NAME_PATTERN, "expected a host name (no scheme, path or wildcard)")),
    ),
    [...DEFAULT_RECORDING_API_KEY_HOSTS],
  ),
  /** The customer-managed KMS key of the imported secrets, if they use one: the functions may decrypt with it. */
  secretsKmsKeyArn: z.optional(arn("kms")),
  /** Where alarms are e-mailed (none: subscribe to the topic yourself). */
  alarmEmail: z.optional(
    z.string().check(z.regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, "expected an e-mail address (name@example.com)")),
  ),
  logRetentionDays: int(30, 1, 3653),
  /**
   * X-Ray traces of the ingest. Off by default: it runs once per event, and X-Ray's price per
   * trace (sampled at 1/s plus 5%) would be paid per event (~$0.30 per million at 100/s). The workers are traced per batch.
   */
  ingestTracing: z._default(z.boolean(), false),
  /** Days before raw archive and quarantine objects move to Infrequent Access, then to Glacier IR. */
  archiveInfrequentAccessDays: int(30, 30, 3650),
  archiveGlacierDays: int(180, 90, 3650),
  /**
   * Days before recordings move to Infrequent Access, then Glacier IR (#59); a transition is left
   * out when `retainRecordingsDays` ends before the class's minimum storage (30, 90 days) is over.
   */
  recordingsInfrequentAccessDays: int(30, 30, 36_500),
  recordingsGlacierDays: int(120, 90, 36_500),
  /** Days the data bucket's server access log (its audit trail, a record a request) keeps a record (#59). */
  retainAccessLogDays: int(365, 1, 36_500),
  /**
   * How long each kind of data in the bucket is kept, days (#34; the table in docs/deploy.md).
   * Unset: kept until you delete it. The raw archive with its edge copies and compacted Parquet,
   * the quarantine, the recordings; oversize bodies (at least 15: they must outlast the DLQ's 14
   * days), Athena's results, and the old versions of every object (the bucket is versioned).
   */
  retainArchiveDays: z.optional(wholeNumber(1, 36_500)),
  retainQuarantineDays: z.optional(wholeNumber(1, 36_500)),
  retainRecordingsDays: z.optional(wholeNumber(1, 36_500)),
  retainOversizeDays: int(30, 15, 36_500),
  retainAthenaResultsDays: int(7, 1, 3650),
  retainNoncurrentVersionsDays: int(30, 1, 3650),
  /**
   * How long the dead-letter queues keep a message, days (SQS keeps at most 14): `redrive`'s
   * window, counted from the message's first enqueue in its source queue (a standard queue's
   * dead-lettered message keeps its enqueue time), so longer than every source queue's retention
   * (`deadLetterProblems`).
   */
  retainDeadLettersDays: int(14, 1, 14),
  /**
   * How long a stream subscriber's queue keeps a fact its consumer has not taken, days. Default:
   * 10, or one day less than `retainDeadLettersDays` when that is shorter (the DLQ must outlast
   * its source).
   */
  retainStreamFactsDays: z.optional(wholeNumber(1, 13)),
  /**
   * How long a closed table item stays, days (DynamoDB TTL; unset: kept): a session that ended, a
   * membership left or kicked (never a ban), a user's presence once offline. Only with
   * `retainArchiveDays`, and at least 2 days longer: an item expires after the archive that could
   * bring its events back (S3 expires an object at the first midnight after its days; a retry may
   * be received after the item closed).
   */
  expireEndedSessionsDays: z.optional(wholeNumber(1, 36_500)),
  expireLeftMembershipsDays: z.optional(wholeNumber(1, 36_500)),
  expireOfflinePresenceDays: z.optional(wholeNumber(1, 36_500)),
  /**
   * The account's expected peak of webhook deliveries per second, all its apps together (a campaign
   * or a reconnect storm across many apps at once). The edge's throttle and the projector's
   * concurrency are sized from it (`edgeSizing`), unless given themselves.
   */
  peakEventsPerSecond: int(250, 1, 10_000),
  /** How far above `peakEventsPerSecond` the edge admits before it answers 429 (100: twice the peak). */
  throttleHeadroomPercent: int(100, 0, 1000),
  /**
   * API Gateway's steady rate and burst, before it answers 429 (a delivery the platform retries at
   * most twice within ~40 s, then drops). Default: the peak plus its headroom, and twice that
   * for the burst, within the account's regional quotas (10,000/s, bursts of 5,000).
   */
  throttleRateLimit: z.optional(wholeNumber(1, 10_000)),
  throttleBurstLimit: z.optional(wholeNumber(1, 5_000)),
  eventsMaxReceiveCount: int(EVENTS_QUEUE.maxReceiveCount, 1, 1000),
  recordingsMaxReceiveCount: int(RECORDINGS_QUEUE.maxReceiveCount, 1, 1000),
  projectorBatchSize: int(EVENTS_QUEUE.batchSize, 1, 10_000),
  projectorBatchingWindowSeconds: int(EVENTS_QUEUE.batchingWindowSeconds, 0, 300),
  /**
   * How the projection tables and their indexes buy capacity: `on-demand` (per request) or
   * `provisioned` (units per second, auto scaled per table and per index between the min and max
   * units below, at the target utilisation). Provisioned is cheaper per unit at steady traffic
   * and has a fixed monthly minimum (docs/capacity-and-cost.md; `npm run bench:cost`).
   */
  capacityMode: z._default(
    z.enum(["on-demand", "provisioned"], 'expected "on-demand" or "provisioned"'),
    "on-demand",
  ),
  /** Provisioned mode: the consumed/provisioned ratio auto scaling keeps (Application Auto Scaling takes 20-90). */
  capacityTargetPercent: int(CAPACITY_DEFAULTS.targetPercent, 20, 90),
  /** Provisioned mode: every table's and index's write units, from min to max. */
  capacityMinWriteUnits: int(CAPACITY_DEFAULTS.minWriteUnits, 1, 40_000),
  capacityMaxWriteUnits: int(CAPACITY_DEFAULTS.maxWriteUnits, 1, 40_000),
  /** Provisioned mode: every table's and index's read units, from min to max. */
  capacityMinReadUnits: int(CAPACITY_DEFAULTS.minReadUnits, 1, 40_000),
  capacityMaxReadUnits: int(CAPACITY_DEFAULTS.maxReadUnits, 1, 40_000),
  /**
   * The projector's concurrent batches. One folded invocation sustains ~1,000 events/s
   * (`PROJECTOR_EVENTS_PER_SECOND`). Default: enough to drain twice the edge's rate (the same
   * headroom again, so a backlog after an outage clears while the peak goes on), at least 5.
   */
  projectorMaxConcurrency: z.optional(wholeNumber(2, 1000)),
  recorderMaxConcurrency: int(5, 2, 1000),
  maxRecordingBytes: int(5 * 1024 ** 3, 1, 5 * 1024 ** 4),
  /**
   * Reconcile presence with the platform's user listing every this many minutes (off when unset):
   * the apps of `reconcileApps`, with their keys from `recordingApiKeysSecretArn`.
   */
  reconcileEveryMinutes: z.optional(
    z.number().check(z.int("expected a whole number of minutes"), z.minimum(1), z.maximum(1440)),
  ),
  /** `{"<appId>": "us" | "eu" | "in"}`: the apps the schedule reconciles, and the region of each. */
  reconcileApps: z._default(z.record(z.string(), z.enum(["us", "eu", "in"])), {}),
  /** The activity rollup recomputes today and yesterday every this many minutes (EventBridge). */
  activityEveryMinutes: int(15, 1, 1440),
  /** A day is final (no longer recomputed) this many minutes after its end: late events are awaited until then. */
  activityGraceMinutes: int(120, 0, 1440),
  /** Athena cancels a query (the rollup's or `webhook sql --stack`'s) that would scan more than this (MB). */
  athenaBytesScannedCutoffMb: int(10_240, 10, 10_000_000),
  /**
   * The services that receive the stream of facts (#41), each through its own queue:
   * `[{"name":"crm","apps":["app1"],"triggers":["group:*","message_sent"],"rawDelivery":true}]`
   * (docs/deploy.md "The stream of facts"). None: nothing is published unless `webhook listen` is on.
   */
  streamSubscribers: z._default(streamSubscribersSchema, []),
  /** Alarm when the oldest message of a queue is older than this many seconds. */
  queueAgeAlarmSeconds: int(300, 60, 1_209_600),
  /** Alarm when this many events fail in the projector within 5 minutes (retried, not yet dead-lettered). */
  projectorFailedAlarmCount: int(10, 1, 1_000_000),
  /** Alarm when this many recordings fail within 15 minutes. */
  recorderFailedAlarmCount: int(3, 1, 1_000_000),
  /** Alarm when more than this percentage of requests answer 5xx over 5 minutes. */
  api5xxAlarmPercent: z._default(z.number().check(z.minimum(0), z.maximum(100)), 1),
  /** The door, where the alarms go, what survives a deletion (#60): `infra/production-config.ts`. */
  ...PRODUCTION_KEYS,
});

/** What one folded projector invocation sustains (`npm run bench:projector`: ~1,040-1,180 at batch 100). */
export const PROJECTOR_EVENTS_PER_SECOND = 1000;

/** API Gateway's account-wide throttle per region (a stage cannot admit more without a quota increase). */
const ACCOUNT_THROTTLE = { rateLimit: 10_000, burstLimit: 5_000 } as const;

/** The edge's throttle and the projector's concurrency: given, or sized from the expected peak. */
export interface EdgeSizing {
  throttleRateLimit: number;
  throttleBurstLimit: number;
  projectorMaxConcurrency: number;
}

type ContextValues = z.infer<typeof contextSchema>;
export type DeploymentConfig = Omit<ContextValues, keyof EdgeSizing> & EdgeSizing;

/**
 * Sizes the edge from the account's expected peak (all its apps together): the throttle admits the
 * peak plus its headroom (burst: twice that), and the projector's concurrency drains twice what
 * the throttle admits, at least 5. A value given in the context is kept as given.
 *
 * @example edgeSizing({ peakEventsPerSecond: 250, throttleHeadroomPercent: 100 }) // { throttleRateLimit: 500, throttleBurstLimit: 1000, projectorMaxConcurrency: 5 }
 */
export function edgeSizing(
  values: Pick<ContextValues, "peakEventsPerSecond" | "throttleHeadroomPercent"> & Partial<EdgeSizing>,
): EdgeSizing {
  const rate =
    values.throttleRateLimit ??
    Math.min(
      ACCOUNT_THROTTLE.rateLimit,
      Math.ceil((values.peakEventsPerSecond * (100 + values.throttleHeadroomPercent)) / 100),
    );
  return {
    throttleRateLimit: rate,
    throttleBurstLimit: values.throttleBurstLimit ?? Math.min(ACCOUNT_THROTTLE.burstLimit, 2 * rate),
    projectorMaxConcurrency:
      values.projectorMaxConcurrency ?? Math.max(5, Math.ceil((2 * rate) / PROJECTOR_EVENTS_PER_SECOND)),
  };
}

/**
 * An edge that refuses the expected peak (429s the platform drops after two retries), or a
 * projector that cannot drain what the edge admits (a backlog that only grows while it lasts).
 */
function edgeProblems(config: DeploymentConfig): string[] {
  const problems: string[] = [];
  const { peakEventsPerSecond: peak, throttleRateLimit: rate, projectorMaxConcurrency: concurrency } = config;
  if (rate < peak)
    problems.push(
      `throttleRateLimit: ${rate} is below peakEventsPerSecond (${peak}): the edge would answer 429 at the expected peak, and the platform drops a delivery after two retries`,
    );
  if (concurrency * PROJECTOR_EVENTS_PER_SECOND < rate)
    problems.push(
      `projectorMaxConcurrency: ${concurrency} drains ~${concurrency * PROJECTOR_EVENTS_PER_SECOND} events/s, below throttleRateLimit (${rate}): the queue would grow for as long as the edge admits that rate`,
    );
  return problems;
}

/** The keys of the deployment's configuration. */
const CONTEXT_KEYS: readonly string[] = Object.keys(contextSchema.shape);

/** The keys that apply only to `capacityMode: "provisioned"`. */
const PROVISIONED_KEYS = [
  "capacityTargetPercent",
  "capacityMinWriteUnits",
  "capacityMaxWriteUnits",
  "capacityMinReadUnits",
  "capacityMaxReadUnits",
  "capacityInitialWriteUnits",
  "capacityInitialReadUnits",
] as const;

/**
 * What the schema cannot see key by key: a minimum above its maximum, and a provisioned-mode key
 * given with on-demand capacity (it would do nothing, silently).
 */
function capacityProblems(config: DeploymentConfig, given: readonly string[]): string[] {
  if (config.capacityMode === "on-demand")
    return PROVISIONED_KEYS.filter((k) => given.includes(k)).map(
      (k) => `${k}: applies only with capacityMode "provisioned" (capacityMode is "on-demand")`,
    );
  const problems: string[] = [];
  for (const kind of ["Write", "Read"] as const) {
    const [min, max] = [config[`capacityMin${kind}Units`], config[`capacityMax${kind}Units`]];
    if (min > max) problems.push(`capacityMin${kind}Units: ${min} is above capacityMax${kind}Units (${max})`);
    const initial = config[`capacityInitial${kind}Units`];
    if (initial !== undefined && (initial < min || initial > max))
      problems.push(
        `capacityInitial${kind}Units: ${initial} is outside capacityMin${kind}Units..capacityMax${kind}Units (${min}..${max})`,
      );
  }
  return problems;
}

/** SQS event sources take a batch of more than 10 only with a batching window (CloudFormation refuses it at deploy). */
function batchProblems(config: DeploymentConfig): string[] {
  return config.projectorBatchSize > 10 && config.projectorBatchingWindowSeconds === 0
    ? [
        `projectorBatchingWindowSeconds: 0 with projectorBatchSize ${config.projectorBatchSize}: a batch of more than 10 needs a window of at least 1 s`,
      ]
    : [];
}

/** S3 keeps an object in Infrequent Access at least this long before a lifecycle moves it on. */
const MIN_DAYS_IN_INFREQUENT_ACCESS = 30;

/** The archive's and the recordings' lifecycle as S3 takes it: Glacier IR at least 30 days after Infrequent Access. */
function archiveProblems(config: DeploymentConfig): string[] {
  const pairs = [
    ["archiveInfrequentAccessDays", "archiveGlacierDays"],
    ["recordingsInfrequentAccessDays", "recordingsGlacierDays"],
  ] as const;
  return pairs.flatMap(([iaKey, glacierKey]) =>
    config[glacierKey] < config[iaKey] + MIN_DAYS_IN_INFREQUENT_ACCESS
      ? [
          `${glacierKey}: ${config[glacierKey]} must be at least ${MIN_DAYS_IN_INFREQUENT_ACCESS} days after ${iaKey} (${config[iaKey]})`,
        ]
      : [],
  );
}

/**
 * Retention of the archive and the quarantine as S3 takes it: an expiration after the storage-class
 * transitions (S3 refuses an expiration on or before a transition, and Glacier IR bills 90 days
 * whatever happens first).
 */
function retentionProblems(config: DeploymentConfig): string[] {
  const problems: string[] = [];
  for (const key of ["retainArchiveDays", "retainQuarantineDays"] as const) {
    const days = config[key];
    if (days !== undefined && days <= config.archiveGlacierDays)
      problems.push(
        `${key}: ${days} must be after archiveGlacierDays (${config.archiveGlacierDays}): lower archiveGlacierDays (and archiveInfrequentAccessDays) to keep less`,
      );
  }
  return problems;
}

/** How long the events and recordings queues keep a message, days (SQS's default). */
export const SOURCE_QUEUE_RETENTION_DAYS = 4;

/** A stream subscriber's queue's retention when not given: 10 days, within the DLQ's. */
const STREAM_FACTS_DAYS = 10;

/**
 * How long each stream subscriber's queue keeps a fact, days: `retainStreamFactsDays`, else 10 or
 * one day less than the dead-letter queues' retention, whichever is shorter.
 *
 * @example streamFactsRetentionDays(readDeploymentConfig({ retainDeadLettersDays: 7 })) // 6
 */
export function streamFactsRetentionDays(config: DeploymentConfig): number {
  return config.retainStreamFactsDays ?? Math.min(STREAM_FACTS_DAYS, config.retainDeadLettersDays - 1);
}

/**
 * A dead-letter queue must keep a message longer than its source queue does: a standard queue's
 * message keeps its first enqueue time when it moves to the DLQ, so a DLQ that keeps no longer
 * than its source may drop it on arrival (SQS Developer Guide, "Setting-up dead-letter queue
 * retention": "always set the retention period of a dead-letter queue to be longer than the
 * retention period of the original queue").
 */
function deadLetterProblems(config: DeploymentConfig): string[] {
  const dlq = config.retainDeadLettersDays;
  const problems: string[] = [];
  if (dlq <= SOURCE_QUEUE_RETENTION_DAYS)
    problems.push(
      `retainDeadLettersDays: ${dlq} must be longer than the events and recordings queues' retention (${SOURCE_QUEUE_RETENTION_DAYS} days): a dead-lettered message keeps its first enqueue time, so a DLQ that keeps it no longer than its source may drop it on arrival`,
    );
  const facts = streamFactsRetentionDays(config);
  if (config.streamSubscribers.length > 0 && dlq <= facts)
    problems.push(
      `retainDeadLettersDays: ${dlq} must be longer than the stream subscribers' queues' retention (retainStreamFactsDays: ${facts}): lower retainStreamFactsDays`,
    );
  return problems;
}

/** The context key of each table's item expiry. */
const ITEM_EXPIRY_KEYS = {
  sessions: "expireEndedSessionsDays",
  memberships: "expireLeftMembershipsDays",
  presence: "expireOfflinePresenceDays",
} as const;

/** The days a closed item of each table stays (DynamoDB TTL), for the tables that have a window. */
export function itemExpiryDays(
  config: DeploymentConfig,
): Partial<Record<keyof typeof ITEM_EXPIRY_KEYS, number>> {
  return Object.fromEntries(
    Object.entries(ITEM_EXPIRY_KEYS).flatMap(([table, key]) =>
      config[key] === undefined ? [] : [[table, config[key]]],
    ),
  );
}

/** An item may expire only after the archive that could bring its events back by a replay. */
function itemExpiryProblems(config: DeploymentConfig): string[] {
  const archive = config.retainArchiveDays;
  return Object.values(ITEM_EXPIRY_KEYS).flatMap((key) => {
    const days = config[key];
    if (days === undefined) return [];
    if (archive === undefined)
      return [
        `${key}: items may expire only after the archive that could replay their events, and the archive is kept forever: set retainArchiveDays too`,
      ];
    return days < archive + 2
      ? [
          `${key}: ${days} must be at least retainArchiveDays + 2 (${archive + 2}): an item expires only after the archive that could replay its events`,
        ]
      : [];
  });
}

/** Edit distance, for "did you mean …" (a dozen short keys: no library needed). */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] ?? 0;
      row[j] = Math.min(
        current + 1,
        (row[j - 1] ?? 0) + 1,
        previous + (a[i - 1]?.toLowerCase() === b[j - 1]?.toLowerCase() ? 0 : 1),
      );
      previous = current;
    }
  }
  return row[b.length] ?? 0;
}

/** The valid key closest to a misspelt one. */
function closestKey(key: string): string {
  return [...CONTEXT_KEYS].sort((x, y) => distance(key, x) - distance(key, y))[0] ?? "";
}

/** Context that is the CDK's own (feature flags, `aws:cdk:` settings, the CLI's), not this app's. */
function isCdkKey(key: string): boolean {
  return key.startsWith("@") || key.includes(":") || key === "cli-telemetry";
}

/**
 * Reads the configuration from the CDK context (`node.getAllContext()`). `-c key=value` gives
 * strings: JSON is accepted for lists, maps, numbers and booleans. An unknown key is an error naming the
 * closest valid key (a misspelt `allowedAppIds` must not deploy an open endpoint).
 *
 * @throws Error naming each problem and the expected form
 */
export function readDeploymentConfig(context: Record<string, unknown>): DeploymentConfig {
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, given] of Object.entries(context)) {
    if (isCdkKey(key)) continue;
    if (!CONTEXT_KEYS.includes(key)) {
      problems.push(`unknown key "${key}" (did you mean "${closestKey(key)}"?)`);
      continue;
    }
    let value = given;
    if (typeof value === "string" && /^([[{\d-]|true$|false$)/.test(value)) {
      try {
        value = JSON.parse(value);
      } catch {
        // keep the string; the schema names the problem
      }
    }
    if (value !== undefined) raw[key] = value;
  }
  const parsed = contextSchema.safeParse(raw, ENGLISH);
  const config = parsed.success ? { ...parsed.data, ...edgeSizing(parsed.data) } : undefined;
  if (!config)
    problems.push(
      ...(parsed.error?.issues ?? []).map((i) => `${i.path.join(".") || "(context)"}: ${i.message}`),
    );
  else
    problems.push(
      ...capacityProblems(config, Object.keys(raw)),
      ...batchProblems(config),
      ...edgeProblems(config),
      ...archiveProblems(config),
      ...retentionProblems(config),
      ...deadLetterProblems(config),
      ...itemExpiryProblems(config),
      ...domainProblems(config),
      ...replicaProblems(config),
    );
  if (!config || problems.length) throw new Error(`invalid CDK context: ${problems.join("; ")}`);
  return config;
}

/**
 * Whether the deployment accepts only the apps allowed in its apps table.
 *
 * @example restrictsApps(readDeploymentConfig({ allowedAppIds: ["app1"] })) // true
 */
export function restrictsApps(config: DeploymentConfig): boolean {
  return config.restrictApps ?? config.allowedAppIds.length > 0;
}

/**
 * The projection tables' capacity the configuration asks for.
 *
 * @example tableCapacity(readDeploymentConfig({ capacityMode: "provisioned" })).mode // "provisioned"
 */
export function tableCapacity(config: DeploymentConfig): TableCapacity {
  if (config.capacityMode === "on-demand") return { mode: "on-demand" };
  return {
    mode: "provisioned",
    targetPercent: config.capacityTargetPercent,
    minWriteUnits: config.capacityMinWriteUnits,
    maxWriteUnits: config.capacityMaxWriteUnits,
    minReadUnits: config.capacityMinReadUnits,
    maxReadUnits: config.capacityMaxReadUnits,
    initialWriteUnits: config.capacityInitialWriteUnits,
    initialReadUnits: config.capacityInitialReadUnits,
  };
}
