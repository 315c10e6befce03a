/** Constants shared by the functions, the CDK app and the local stack. */

/** The realm sent in `WWW-Authenticate` on a 401. */
export const AUTH_REALM = "webhooks";

/** A Basic `Authorization` header longer than this is refused before decoding (50 + 100 chars of credentials fit in ~210). */
export const MAX_AUTHORIZATION_HEADER_LENGTH = 1024;

/** SQS's maximum message size (body + attributes), 1 MiB. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/**
 * Bodies above this go to S3 with a pointer in SQS. It leaves room under the SQS limit for the
 * message attributes (trigger, appId, receivedAt, eventId, bodyLocation: well under 1 KiB).
 */
export const SQS_INLINE_BODY_LIMIT_BYTES = SQS_MAX_MESSAGE_BYTES - 4096;

/** Default hard cap on a webhook body: Lambda's synchronous invocation payload limit (6 MB). */
export const DEFAULT_MAX_BODY_BYTES = 6_000_000;

/** Triggers are snake_case ids; anything else is not a trigger (and could not be an SQS attribute). */
export const TRIGGER_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;

/** App ids: printable ASCII, bounded, so that they are safe in keys, attributes and S3 paths. */
export const APP_ID_PATTERN = /^[\x21-\x7e]{1,128}$/;

/**
 * The SQS message group (the fair queues' tenant) of an event that names no app. An app id is
 * printable ASCII of 1-128 characters, exactly what a `MessageGroupId` may hold, so every app is
 * its own group; events without one share this group rather than each counting as a tenant of its
 * own (which SQS would never see as noisy).
 */
export const NO_APP_MESSAGE_GROUP = "(no-app)";

/**
 * The scheduled rollup stops its Athena queries this long before its invocation would time out,
 * to count the days it could not finish (`ActivityRollups` failed) and return: enough for a
 * query's stop, a day's write to DynamoDB and the log lines.
 */
export const ROLLUP_DEADLINE_MARGIN_MS = 20_000;

/** Object key prefixes in the data bucket. */
export const S3_PREFIX = {
  oversize: "oversize/",
  raw: "raw/",
  /**
   * The facts reconcile observed and applied (#57 item 4: `reconcile/app=<app>/date=<day>/…`), in
   * the raw archive's line format: replayed onto the stream, redacted by `forget`, and outside
   * `raw/`, so that no activity figure or ledger counts them as deliveries.
   */
  reconcile: "reconcile/",
  /**
   * Copies of the archive lines that another day's activity recompute needs (late events, and
   * receipt-timed lines near midnight), under the day that needs them: `edgeDaysOf`.
   */
  edge: "edge/",
  quarantine: "quarantine/",
  recordings: "recordings/",
  /**
   * The rollup's ledger: per day, its last pass over every app (`rollup/date=<day>.json`, a
   * `DayPass`): when, whether final, and a digest of each app's figures, so that a pass writes
   * only the apps whose figures changed.
   */
  rollup: "rollup/",
  /** Closed receipt days of the raw archive rewritten as Parquet (`compact/date=<day>/`). */
  compact: "compact/",
  /** Athena's query results (the activity rollup and `webhook sql --stack`), expired after a week. */
  athenaResults: "athena-results/",
  /** Each closed day's active users and first sightings per app (`analytics/user-sets/`). */
  users: "users/",
  /** An erasure's plan while it runs (`erasures/<erasureId>/plan.json`: keys and days, no personal data). */
  erasures: "erasures/",
  /**
   * What the platform confirmed of an import (#43, `npx webhook import`): per import day, the
   * users (`imports/users/date=<day>/…`), every app together (`contracts/import-records.ts`).
   */
  imports: "imports/",
} as const;

/**
 * How long after a delivery the platform may deliver the same event again. It retries at most
 * twice, 10 s and 30 s after a failed delivery, each waiting up to 2 s for an answer: ~45 s
 * (DESIGN.md; the interface spec leaves retries unspecified). Five minutes gives room for
 * delivery delays and is as long as a projected item remembers an event (`projector/core.ts`).
 * A receipt-timed archive line received this close to midnight is copied to the next day's edge.
 */
export const PLATFORM_RETRY_HORIZON_MS = 5 * 60_000;

/** The recorder stops a job this long before the function's timeout, to record the outcome. */
export const RECORDER_DEADLINE_MARGIN_MS = 60_000;

/** Default size cap of one recording (5 GiB). */
export const DEFAULT_MAX_RECORDING_BYTES = 5 * 1024 ** 3;

/**
 * Attempts of an activity day's replace when another run writes the day between its read and its
 * transaction (each attempt reads the day again); two rollups at once need two.
 */
export const ACTIVITY_REPLACE_ATTEMPTS = 5;

/** DynamoDB's largest partition-key value (UTF-8 bytes), of a table or an index. */
export const DYNAMO_PARTITION_KEY_MAX_BYTES = 2048;

/** DynamoDB's largest sort-key value (UTF-8 bytes), of a table or an index. */
export const DYNAMO_SORT_KEY_MAX_BYTES = 1024;

/**
 * The platform's own domains: the only hosts a recording's first request may carry the app's
 * `apiKey` to (a host equal to one, or under it). A `recording_url` naming any other host is
 * fetched without the key. Deployers set `recordingApiKeyHosts` for another platform domain.
 */
export const DEFAULT_RECORDING_API_KEY_HOSTS: readonly string[] = ["cometchat.io", "cometchat.com"];

/** A host name as `recordingApiKeyHosts` takes it: lower-case labels of letters, digits and -, or an IP literal. */
export const HOST_NAME_PATTERN =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$|^[0-9a-f:]+$/i;

/**
 * A rise in one trigger's quarantine rate, which is how a change of the platform's payloads shows
 * (every live edit and delete was quarantined before #30, and nothing said so): the trigger's
 * quarantined share above `sharePercent` of at least `minEvents` of its events within
 * `windowMinutes`. One alarm per trigger (`infra/constructs/monitoring.ts`) and the console's
 * highlight use it. 20 events keep a quiet trigger's single bad delivery from alarming; 5% is far
 * above what a healthy trigger shows (0) and far below a shape change (100%).
 */
export const QUARANTINE_SPIKE = { windowMinutes: 15, minEvents: 20, sharePercent: 5 } as const;

/**
 * The refused-deliveries alarm (#52, #58): one username the deployment knows refused at least
 * `minRefusals` times within `windowMinutes` (Contributor Insights' `MaxContributorValue`,
 * `shared/watchdog/refusal-rule.ts`), whatever its share of the traffic. A rotation refuses none
 * (both credentials are valid at once); a credential changed by hand refuses every delivery of
 * its apps; a scanner's guesses are unknown usernames and not counted.
 */
export const REFUSALS = { windowMinutes: 5, minRefusals: 1 } as const;
