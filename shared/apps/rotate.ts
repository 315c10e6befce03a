import type { WebhookCredential } from "../contracts/secrets";
import { type ConnectReport, connectApps, type DesiredWebhook, findOurWebhook } from "./connect";
import type { AppRegistry } from "./dynamo-app-registry";
import type { ManagementApi } from "./management-api";

/**
 * Where the deployment's accepted credentials live, as a whole list (the secret's shape): the
 * deployed Secrets Manager secret, or the local stack's file (`tools/local/credentials-store.ts`).
 */
export interface CredentialStore {
  list(): Promise<WebhookCredential[]>;
  write(credentials: readonly WebhookCredential[]): Promise<void>;
}

/** The waits of a rotation, ms. */
export interface RotationWaits {
  /** How often the ingest is probed with the new credential until it accepts it. */
  probeEveryMs: number;
  /** How long the ingest may take to accept it (its cache: a miss re-reads at most every 5 s). */
  acceptWithinMs: number;
  /**
   * How long the old credential stays valid after every app was switched: the platform's retries
   * of a delivery made with it (≥ 40 s) plus the ingest's cache (60 s).
   */
  retireAfterMs: number;
}

/** The defaults: 40 s of platform retries plus the 60 s cache, and 5 s of margin. */
export const DEFAULT_ROTATION_WAITS: RotationWaits = {
  probeEveryMs: 1_000,
  acceptWithinMs: 30_000,
  retireAfterMs: 105_000,
};

export interface RotationOptions {
  store: CredentialStore;
  api: ManagementApi;
  registry: AppRegistry;
  /** The connected apps, each with the triggers its webhook is subscribed to (kept as they are). */
  apps: ReadonlyArray<{ appId: string; triggers: readonly string[] }>;
  /** Our webhook as `connect` writes it, without its credential (the rotation gives it) or triggers. */
  webhook: Omit<DesiredWebhook, "username" | "password" | "triggers">;
  /** A new credential, used unless a rotation left one to finish (the store's second). */
  fresh: () => WebhookCredential;
  /** Whether the ingest accepts a credential now (a request that authenticates, stores nothing). */
  accepts: (credential: WebhookCredential) => Promise<boolean>;
  waits?: RotationWaits;
  sleep?: (ms: number) => Promise<void>;
  /** Plan only: say what would change, write nothing. */
  dryRun?: boolean;
  onStep?: (step: string) => void;
}

export interface RotationReport {
  /** `rotated`: every app switched and the old credential retired; `incomplete`: both stay valid. */
  outcome: "rotated" | "incomplete" | "dry-run";
  /** The usernames, never a password. */
  from: string;
  to: string;
  /** The per-app update (`connect`'s report) and which apps read back the new credential. */
  connect?: ConnectReport;
  confirmed: string[];
  /** Apps still delivering with the old credential (an update refused, or not read back). */
  stillOld: string[];
}

/**
 * Rotates the deployment's Basic credential with no delivery refused: (1) adds a new credential
 * beside the current one (the store holds both: a rotation left half-way is resumed with the one it
 * added), (2) waits until the ingest accepts it, (3) points every app's webhook at it through the
 * management API (`connectApps`) and reads each back, then, only when every app is confirmed,
 * (4) waits for the platform's retries of deliveries made with the old credential and the
 * ingest's cache, and (5) retires the old one. An app not switched stops the rotation before (4):
 * both credentials stay valid and the report names the apps still on the old one; run again.
 *
 * @example await rotateCredentials({ store, api, registry, apps, webhook, fresh, accepts }) // { outcome: "rotated", … }
 */
export async function rotateCredentials(options: RotationOptions): Promise<RotationReport> {
  const waits = options.waits ?? DEFAULT_ROTATION_WAITS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const step = options.onStep ?? (() => undefined);
  const current = await options.store.list();
  const [old, pending] = current as [WebhookCredential, WebhookCredential | undefined];
  if (!old) throw new Error("the credential store is empty");
  const next = pending ?? options.fresh();
  const report: RotationReport = {
    outcome: "dry-run",
    from: old.username,
    to: next.username,
    confirmed: [],
    stillOld: [],
  };
  if (options.dryRun) return report;
  if (!pending) {
    await options.store.write([old, next]);
    step(`added ${next.username} beside ${old.username}: both are accepted`);
  } else step(`resuming: ${old.username} and ${next.username} are both accepted`);

  const deadline = Date.now() + waits.acceptWithinMs;
  while (!(await options.accepts(next))) {
    if (Date.now() >= deadline)
      throw new Error(
        `the ingest does not accept ${next.username} after ${waits.acceptWithinMs / 1000} s: both credentials stay valid; run again`,
      );
    await sleep(waits.probeEveryMs);
  }
  step(`the ingest accepts ${next.username}`);

  report.connect = await switchApps(options, next);
  for (const { appId } of options.apps) {
    const failed = report.connect.apps.find((a) => a.appId === appId)?.error;
    const ours = failed ? undefined : findOurWebhook(await options.api.listWebhooks(appId), options.webhook);
    const switched =
      ours?.username === next.username && (ours.password === undefined || ours.password === next.password);
    (switched ? report.confirmed : report.stillOld).push(appId);
  }
  step(`${report.confirmed.length} of ${options.apps.length} apps read back ${next.username}`);
  if (report.stillOld.length) {
    report.outcome = "incomplete";
    return report;
  }
  step(
    `waiting ${Math.round(waits.retireAfterMs / 1000)} s (the platform's retries with ${old.username}, and the ingest's cache)`,
  );
  await sleep(waits.retireAfterMs);
  await options.store.write([next]);
  step(`retired ${old.username}`);
  report.outcome = "rotated";
  return report;
}

/** Every app's webhook pointed at `credential` (`connectApps`, once per set of triggers: each app keeps its own). */
async function switchApps(
  options: Pick<RotationOptions, "api" | "registry" | "apps" | "webhook">,
  credential: WebhookCredential,
): Promise<ConnectReport> {
  const byTriggers = new Map<string, { triggers: readonly string[]; appIds: string[] }>();
  for (const { appId, triggers } of options.apps) {
    const key = [...triggers].sort().join(",");
    const group = byTriggers.get(key) ?? { triggers, appIds: [] };
    group.appIds.push(appId);
    byTriggers.set(key, group);
  }
  const merged: ConnectReport = { apps: [], calls: { list: 0, write: 0 }, dryRun: false };
  for (const { triggers, appIds } of byTriggers.values()) {
    const desired: DesiredWebhook = {
      ...options.webhook,
      triggers,
      username: credential.username,
      password: credential.password,
    };
    const part = await connectApps({ api: options.api, registry: options.registry, appIds, desired });
    merged.apps.push(...part.apps);
    merged.calls.list += part.calls.list;
    merged.calls.write += part.calls.write;
  }
  return merged;
}

/**
 * The way back from a rotation left half-way (the store holds two credentials): every app's
 * webhook pointed at the old credential again, read back, then the new one removed. After a
 * completed rotation the old credential is gone: the way back is another rotation.
 *
 * @example await restoreCredentials({ store, api, registry, apps, webhook, accepts })
 */
export async function restoreCredentials(
  options: Omit<RotationOptions, "fresh" | "dryRun">,
): Promise<RotationReport> {
  const [old, pending] = await options.store.list();
  if (!old || !pending) throw new Error("no rotation to undo: the store holds one credential");
  const connect = await switchApps(options, old);
  const stillOld = connect.apps.filter((a) => a.error).map((a) => a.appId);
  if (stillOld.length === 0) await options.store.write([old]);
  return {
    outcome: stillOld.length ? "incomplete" : "rotated",
    from: pending.username,
    to: old.username,
    connect,
    confirmed: connect.apps.filter((a) => !a.error).map((a) => a.appId),
    stillOld,
  };
}
