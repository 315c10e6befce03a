import type { FactSpec, Uid } from "./cast";
import type { AppId } from "./world";

/*
 * What the writers model knows (issue #50): the facts the platform delivered and the ingest
 * acknowledged, the erasures that ended, the apps forgotten, the users imported, what expired,
 * the credentials retired. The invariants (test/integration/writers-model/invariants.ts) compare
 * the stored state with it.
 */

/** An acknowledged delivery (200 from the ingest): the platform will not send it again. */
export interface Delivered {
  eventId: string;
  trigger: string;
  app: AppId;
  body: string;
  /** The cast members the body names. */
  uids: Uid[];
  receivedAt: number;
  /** Acknowledged, not yet known to be through the projector (its queue not drained since). */
  pending: boolean;
}

/** An erasure that ended (its report returned). */
export interface Erasure {
  app: AppId;
  uid: Uid;
  pseudonym: string;
  erasureId: string;
  /** Nothing unreached (no message queued at its start or end): the uid must be gone everywhere. */
  complete: boolean;
}

/** One operation of a step, as drawn. */
export type OpSpec = (
  | { op: "deliver"; facts: FactSpec[]; retry: boolean }
  | { op: "forget"; app: AppId; uid: Uid }
  | { op: "forgetApp"; app: AppId }
  | { op: "rederive"; app?: AppId }
  | { op: "replay"; app?: AppId }
  | { op: "resend"; pick: number; redacted: boolean }
  | { op: "rollup"; app?: AppId }
  | { op: "tick" }
  | { op: "compact"; fault?: boolean; running?: boolean }
  | { op: "ctasEnd" }
  | { op: "import"; app: AppId; uids: Uid[]; createdDaysAgo: number; fold: boolean }
  | { op: "sweep" }
  | { op: "rotate"; apps: AppId[]; fault: boolean }
  | { op: "advance"; hours: number }
  | { op: "expire" }
  /** The clock jumps once the step's scheduler released `after` of its own waits (1: at its first). */
  | { op: "lapse"; after?: number }
  // The queues' second chances and the stream (operations/stream.ts).
  | { op: "queue"; facts: FactSpec[] }
  | { op: "drain"; again?: boolean }
  | { op: "stall" }
  | { op: "unpublish" }
  | { op: "redrive"; stream: boolean }
  | { op: "replayStream"; app?: AppId; subscriber: boolean }
  | { op: "replayQuarantine"; app?: AppId }
  | { op: "record" }
) & {
  /** The operation crashes before its `crashAt`-th request: its promise is abandoned there. */
  crashAt?: number;
  /** The clock first moves this many hours (as `advance` does), then the operation runs: "days later". */
  laterHours?: number;
};

export interface Model {
  delivered: Delivered[];
  erasures: Erasure[];
  /** `<app>/<uid>` whose erasure was asked for: the platform no longer sends facts naming them. */
  requested: Set<string>;
  /** Apps whose erasure ended, and those whose erasure began (their archive is in between). */
  forgottenApps: Set<AppId>;
  forgettingApps: Set<AppId>;
  imported: Array<{ app: AppId; uid: Uid; createdAt: number; importedAt: number }>;
  /** The first receipt day the retention sweep kept (older ones removed by design). */
  keptFrom?: string;
  /** Credentials a rotation reported retired (rotated). */
  retired: Array<{ username: string; password: string }>;
  /** A delivery or a resend crashed: its messages' fate is known only at the run's settling. */
  inFlightUnknown: boolean;
  /** An operation's own check that failed (a rotation's, the sweep's). */
  violations: string[];
  /** What happened, step by step (printed with a failure). */
  log: string[];
  /**
   * Measuring (`MODEL_MEASURE`): violations are kept here, each once with the step that first
   * showed it, and the run goes on; otherwise the first step that shows one fails the run.
   */
  collected?: Array<{ violation: string; step: string }>;
  nextFact: number;
  /**
   * Recordings the recorder archived (`operations/side.ts`): their key, app and session, and
   * whether their app or a user of their session was being erased when they were (then no
   * invariant says where they must be).
   */
  recorded: Array<{ key: string; app: AppId; session: string; duringErasure: boolean }>;
}

export function emptyModel(): Model {
  return {
    delivered: [],
    erasures: [],
    requested: new Set(),
    forgottenApps: new Set(),
    forgettingApps: new Set(),
    imported: [],
    retired: [],
    inFlightUnknown: false,
    violations: [],
    log: [],
    nextFact: 0,
    recorded: [],
  };
}

/** Whether a fact may still be delivered: its app not being forgotten, none of its people erased. */
export function deliverable(m: Model, spec: FactSpec): boolean {
  if (m.forgottenApps.has(spec.app) || m.forgettingApps.has(spec.app)) return false;
  return ![spec.actor, spec.peer].some((uid) => m.requested.has(`${spec.app}/${uid}`));
}

/**
 * The user a drawn `forget` of `uid` in `app` erases: `uid` when the app has a fact or an import
 * of them, else the first erasable user it has one of (an operator erases someone the app knows).
 */
export function knownUser(m: Model, app: AppId, uid: Uid, erasable: readonly Uid[]): Uid {
  const known = (u: Uid) =>
    m.delivered.some((d) => d.app === app && d.uids.includes(u)) ||
    m.imported.some((i) => i.app === app && i.uid === u);
  return known(uid) ? uid : (erasable.find(known) ?? uid);
}

/** A one-line description of an operation, for the step's name and a failure's path. */
export function describeOp(o: OpSpec): string {
  const crash = o.crashAt === undefined ? "" : ` (crash at request ${o.crashAt})`;
  if (o.laterHours) return `${o.laterHours} h later, ${describeOp({ ...o, laterHours: undefined })}`;
  switch (o.op) {
    case "deliver":
      return `deliver ${o.facts.map((f) => `${f.kind}:${f.app}:${f.actor}->${f.peer}`).join(",")}${o.retry ? " +retries" : ""}${crash}`;
    case "forget":
      return `forget ${o.uid} --app ${o.app}${crash}`;
    case "forgetApp":
      return `forget --app ${o.app}${crash}`;
    case "rederive":
    case "replay":
    case "rollup":
      return `${o.op}${o.app ? ` --app ${o.app}` : " (every app)"}${crash}`;
    case "resend":
      return `resend #${o.pick}${o.redacted ? " (of a line an erasure redacted)" : ""}${crash}`;
    case "import":
      return `import users ${o.uids.join(",")} --app ${o.app} (created ${o.createdDaysAgo} d before${o.fold ? ", folded" : ""})${crash}`;
    case "rotate":
      return `rotate-credentials ${o.apps.join("+")}${o.fault ? " (the ingest answers 503 once the old pair is removed)" : ""}${crash}`;
    case "compact":
      return `compact${o.running ? " (its CTAS runs on)" : ""}${o.fault ? " (S3 refuses the CTAS marker's query id)" : ""}${crash}`;
    case "replayQuarantine":
      return `replay --quarantine${o.app ? ` --app ${o.app}` : " (every app)"}${crash}`;
    case "record":
      return `the recorder drains the recordings queue${crash}`;
    case "ctasEnd":
      return "Athena ends the queries still running";
    case "advance":
      return `clock +${o.hours} h`;
    case "lapse":
      return `clock jumps past the lease's lapse (16 min)${o.after ? ` at its wait ${o.after}` : ""}`;
    case "expire":
      return "clock to the hour the oldest day held expires";
    case "queue":
      return `deliver ${o.facts.map((f) => `${f.kind}:${f.app}:${f.actor}->${f.peer}`).join(",")} (left queued)${crash}`;
    case "drain":
      return `the projector drains the events queue${o.again ? " (each batch twice)" : ""}${crash}`;
    case "stall":
      return `the projector drains, DynamoDB and S3 throttled, until the DLQ${crash}`;
    case "unpublish":
      return `the projector drains, SNS throttled, until the unpublished queue${crash}`;
    case "redrive":
      return `redrive${o.stream ? " --stream" : ""}${crash}`;
    case "replayStream":
      return `replay ${o.subscriber ? "--to-subscriber" : "--to-stream"}${o.app ? ` --app ${o.app}` : " (every app)"}${crash}`;
    default:
      return `${o.op}${crash}`;
  }
}
