/**
 * What a start of the local stack is given: its options (port, state directory, what the terminal
 * shows, retries, recording policy, allowed apps, rollups, retention, subscribers) and the
 * development defaults it falls back on. No code runs here: every step of the stack reads it.
 */
import type { StreamSubscriber } from "../../shared/stream/subscribers";
import type { LogMode } from "./log-tap";
import type { RetentionWindows } from "./retention";
import type { StatusLine } from "./status-line";

/** Development defaults, printed at start and documented in the README. Never used in AWS. */
export const DEV_USERNAME = "local-webhook";
export const DEV_PASSWORD = "local-password-change-me";

/** Locally a failed event is retried after this many seconds (deployed: 6 × the consumer's timeout). */
export const DEFAULT_LOCAL_RETRY_SECONDS = 5;

export interface LocalStackOptions {
  port: number;
  host?: string;
  stateDir: string;
  /** Keep nothing on disk (DynamoDB Local and fauxqs in memory). */
  inMemory?: boolean;
  /** Start from empty tables, queues and bucket. */
  clean?: boolean;
  username?: string;
  password?: string;
  /** The webhook URL's secret segment (`/webhook/<token>`, as `webhookPathToken` deployed). @default - `/webhook` */
  webhookPathToken?: string;
  /** What the terminal shows of the functions' lines (`LogMode`). @default "readable" */
  logMode?: LogMode;
  /** The live status line (`npm start`'s default), fed with every outcome and stepped around other output. */
  status?: Pick<StatusLine, "count" | "terminal" | "silent">;
  /**
   * Seconds before a failed event is received again (the queue's visibility timeout); recording
   * jobs wait six times as long. The receive counts before the DLQ are the deployed ones.
   * @default DEFAULT_LOCAL_RETRY_SECONDS
   */
  retrySeconds?: number;
  /**
   * `local` (default): the recorder may fetch over http and from loopback, so the simulator's file
   * server works. `deployed`: the policy AWS runs (https only, public addresses only).
   */
  recordingPolicy?: "local" | "deployed";
  /**
   * Accept only the apps allowed in the apps table (as `restrictApps` deployed).
   * @default - on when `allowedAppIds` is given
   */
  restrictApps?: boolean;
  /** App ids written as allowed into the apps table at start (as the `allowedAppIds` context key deployed). */
  allowedAppIds?: readonly string[];
  /** Recompute today's activity figures every this many minutes (0 or absent: never). */
  activityEveryMinutes?: number;
  /**
   * The retention windows applied on start and every hour (`tools/local/retention.ts`): `npm
   * start` reads cdk.json's context, as a deployment would. @default none: everything is kept
   */
  retention?: RetentionWindows;
  /**
   * The stream's subscribers (#41), as cdk.json's `streamSubscribers` declares them: each gets its
   * queue and filter locally. @default none: the projector publishes only while `listen` runs
   */
  streamSubscribers?: readonly StreamSubscriber[];
  /** Emulator ports (default: free ones). */
  dynamoPort?: number;
  fauxqsPort?: number;
}
