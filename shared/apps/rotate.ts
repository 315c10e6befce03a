import type { WebhookCredential } from "../contracts/secrets";
import { CredentialRotationError } from "../platform/errors";
import { type ConnectReport, connectApps, type DesiredWebhook, findOurWebhook } from "./connect";
import type { AppRegistry } from "./dynamo-app-registry";
import { type ProbeAnswer, probeUntilAccepted, probeUntilRefused } from "./ingest-probe";
import type { ManagementApi } from "./management-api";
import { type RotationLock, withRotationLock } from "./rotation-lock";

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
  /** How often the ingest is probed: with a new credential until it accepts it, with an old one until it refuses it. */
  probeEveryMs: number;
  /** How long the ingest may take to accept a new credential (its cache: a miss re-reads at most every 5 s). */
  acceptWithinMs: number;
  /**
   * How long an old credential stays in the store once every app of it was switched: the
   * platform's retries of a delivery made with it (the last one 40 s after the first).
   */
  retireAfterMs: number;
  /**
   * The ingest's credential cache (`CREDENTIALS_CACHE_SECONDS`, 60 s): every instance re-reads the
   * store within this long, so a credential removed at T is refused everywhere from T + this.
   */
  cacheMs: number;
  /**
   * How long past that bound the old credential may still be accepted (or the ingest's answers
   * unclear: a 5xx, a throttle, a network fault, each probed again) before the rotation says so
   * and fails.
   */
  refuseWithinMs: number;
}

/** The defaults: 40 s of platform retries and 5 s of margin, then the ingest's 60 s cache. */
export const DEFAULT_ROTATION_WAITS: RotationWaits = {
  probeEveryMs: 1_000,
  acceptWithinMs: 30_000,
  retireAfterMs: 45_000,
  cacheMs: 60_000,
  refuseWithinMs: 30_000,
};

/** A connected app (the registry's webhook record): its triggers (kept as they are) and the credential it delivers with. */
export interface ConnectedApp {
  appId: string;
  triggers: readonly string[];
  /** The username of the credential its webhook delivers with (never the password). */
  username: string;
}

export interface RotationOptions {
  store: CredentialStore;
  api: ManagementApi;
  registry: AppRegistry;
  /** The connected apps (`connect`'s records): each credential's apps are those that deliver with it. */
  apps: readonly ConnectedApp[];
  /** Our webhook as `connect` writes it, without its credential (the rotation gives it) or triggers. */
  webhook: Omit<DesiredWebhook, "username" | "password" | "triggers">;
  /**
   * The usernames of the credentials to rotate: one, some, or (absent) every credential of the
   * store. A credential a rotation left half-way is resumed with the one it added.
   */
  credentials?: readonly string[];
  /** A new pair for an old credential (it keeps the old one's `appIds`); usernames must differ. */
  fresh: (old: WebhookCredential) => Pick<WebhookCredential, "username" | "password">;
  /** What the ingest answers a credential now (a request that authenticates, stores nothing): `ingest-probe.ts`. */
  probe: (credential: WebhookCredential) => Promise<ProbeAnswer>;
  /**
   * One rotation at a time (`rotation-lock.ts`: the apps table's lease): held while the store is
   * read and written; another rotation holding it refuses this one (`RotationLockedError`).
   */
  lock: RotationLock;
  waits?: RotationWaits;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Plan only: say what would change, write nothing. */
  dryRun?: boolean;
  onStep?: (step: string) => void;
}

/**
 * What became of one credential: `rotated` (every app switched, the old one removed and refused
 * by the ingest), `incomplete` (an app not switched: both stay valid), `still-accepted` (removed,
 * but the ingest still accepted it past its cache), `unconfirmed` (removed, but the ingest's
 * answers never told whether it refuses it: 5xx, throttled, unreachable), `dry-run`.
 */
export type RotationOutcome = "rotated" | "incomplete" | "still-accepted" | "unconfirmed" | "dry-run";

export interface CredentialRotation {
  outcome: RotationOutcome;
  /** The usernames, never a password. */
  from: string;
  to: string;
  /** The apps both are limited to (absent: any app). */
  appIds?: string[];
  /** Whether the new credential was added by an earlier run left half-way. */
  resumed: boolean;
  /** The connected apps delivering with either (the registry's records): those to switch. */
  apps: string[];
  /** Those switched and read back. */
  confirmed: string[];
  /** Apps still delivering with the old credential: an update refused, not read back, or not connected (`unconnected`). */
  stillOld: string[];
  /** Apps of its `appIds` that `connect` never connected: their webhooks are not known, so the old credential stays. */
  unconnected: string[];
  /** When the old credential left the store, and the time from which no instance of the ingest accepts it (ms). */
  removedAt?: number;
  acceptedUntil?: number;
  /** When a probe with the old credential was first refused at or after `acceptedUntil`. */
  refusedAt?: number;
  /** `unconfirmed`: what the ingest answered instead of a 401 (`503`, a network fault). */
  unclear?: string;
}

export interface RotationReport {
  /** The worst of the credentials' outcomes (`incomplete`, then `still-accepted`, then `unconfirmed`). */
  outcome: RotationOutcome;
  credentials: CredentialRotation[];
  /** The per-app updates (`connect`'s reports, merged). */
  connect?: ConnectReport;
  /** Every credential's confirmed and still-old apps. */
  confirmed: string[];
  stillOld: string[];
}

/** One credential's rotation as planned from the store: its new one (added now, or by a run left half-way) and its apps. */
interface RotationPlan {
  old: WebhookCredential;
  next: WebhookCredential;
  resumed: boolean;
  apps: ConnectedApp[];
  unconnected: string[];
}

/**
 * The plan of a rotation of `chosen` (every credential when absent), from what the store holds:
 * a credential with `replaces` is the new one of a rotation under way, resumed, never rotated
 * itself. Each new credential keeps its old one's `appIds`; each plan's apps are the connected
 * apps delivering with either.
 *
 * @example planRotation([{ username: "a", password: "…" }], apps, undefined, fresh)[0].next // { username: "webhook-…", replaces: "a" }
 * @throws CredentialRotationError naming a credential the store does not hold, or a new one named instead of its old
 */
export function planRotation(
  stored: readonly WebhookCredential[],
  apps: readonly ConnectedApp[],
  chosen: readonly string[] | undefined,
  fresh: RotationOptions["fresh"],
): RotationPlan[] {
  const pending = stored.filter((c) => c.replaces !== undefined);
  const current = stored.filter((c) => c.replaces === undefined);
  if (current.length === 0) throw new CredentialRotationError("the credential store is empty");
  for (const name of chosen ?? []) {
    const underway = pending.find((p) => p.username === name);
    if (underway)
      throw new CredentialRotationError(
        `${name} is the new credential of a rotation of ${underway.replaces} left half-way: name ${underway.replaces} to finish it`,
      );
    if (!current.some((c) => c.username === name))
      throw new CredentialRotationError(
        `the credential store holds no ${name} (it holds ${current.map((c) => c.username).join(", ")})`,
      );
  }
  const connected = new Set(apps.map((a) => a.appId));
  const usernames = new Set(stored.map((c) => c.username));
  return current
    .filter((old) => !chosen || chosen.includes(old.username))
    .map((old) => {
      const added = pending.find((p) => p.replaces === old.username);
      let next = added;
      if (!next) {
        const pair = fresh(old);
        if (usernames.has(pair.username))
          throw new CredentialRotationError(
            `a new credential's username ${pair.username} is already in the store`,
          );
        usernames.add(pair.username);
        next = { ...pair, ...(old.appIds ? { appIds: [...old.appIds] } : {}), replaces: old.username };
      }
      const names = [old.username, next.username];
      return {
        old,
        next,
        resumed: added !== undefined,
        apps: apps.filter((a) => names.includes(a.username)),
        unconnected: (old.appIds ?? []).filter((appId) => !connected.has(appId)),
      };
    });
}

/**
 * Rotates the deployment's Basic credentials, one, some or all of them (`credentials`), with no
 * delivery refused: (1) adds a new credential beside each old one, with its `appIds` (one write
 * of the store; a rotation left half-way is resumed with the one it added), (2) waits until the
 * ingest accepts each, (3) points each app that delivers with an old one at its new one through
 * the management API (`connectApps`) and reads each back, then, for each credential whose every
 * app is confirmed, (4) waits for the platform's retries of deliveries made with the old one,
 * (5) removes it (one write), and (6) waits for the ingest's cache, probing with the old one
 * until it is refused (a 401: a 5xx or a network fault is probed again, never taken for a
 * refusal; `unconfirmed` if the ingest never tells). A credential with an app not switched stays
 * valid beside its new one, and the report names the app: run again. The report says when each
 * old credential was refused. The whole run holds the rotation lease (`lock`): one rotation of
 * the deployment's credentials at a time, since each writes the whole list it read.
 *
 * @example await rotateCredentials({ store, api, registry, apps, webhook, fresh, probe, lock }) // { outcome: "rotated", … }
 * @throws RotationLockedError, with nothing changed, when another rotation holds the lease
 * @throws CredentialRotationError when a new credential is not accepted in time (both stay valid)
 */
export async function rotateCredentials(options: RotationOptions): Promise<RotationReport> {
  const now = options.now ?? Date.now;
  if (options.dryRun) {
    const plans = planRotation(await options.store.list(), options.apps, options.credentials, options.fresh);
    return reportOf(plans.map((p) => rotationOf(p)));
  }
  return withRotationLock(options.lock, "rotate-credentials", now, (renew) => rotateHolding(options, renew));
}

/** A credential's rotation as planned, before anything is done (a dry run's). */
function rotationOf(p: RotationPlan): CredentialRotation {
  return {
    outcome: "dry-run",
    from: p.old.username,
    to: p.next.username,
    ...(p.old.appIds ? { appIds: [...p.old.appIds] } : {}),
    resumed: p.resumed,
    apps: p.apps.map((a) => a.appId),
    confirmed: [],
    stillOld: [],
    unconnected: p.unconnected,
  };
}

/** `rotateCredentials` holding the rotation lease: `renew` before each write of the store and as it waits. */
async function rotateHolding(options: RotationOptions, renew: () => Promise<void>): Promise<RotationReport> {
  const waits = options.waits ?? DEFAULT_ROTATION_WAITS;
  const rest = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const sleep = async (ms: number) => {
    await rest(ms);
    await renew();
  };
  const now = options.now ?? Date.now;
  const step = options.onStep ?? (() => undefined);
  const stored = await options.store.list();
  const plans = planRotation(stored, options.apps, options.credentials, options.fresh);
  const rotations = plans.map((p) => rotationOf(p));

  const added = plans.filter((p) => !p.resumed).map((p) => p.next);
  if (added.length) {
    await renew();
    await options.store.write([...stored, ...added]);
    for (const p of plans)
      if (!p.resumed) step(`added ${p.next.username} beside ${p.old.username}: both are accepted`);
  }
  for (const p of plans)
    if (p.resumed) step(`resuming: ${p.old.username} and ${p.next.username} are both accepted`);
  const probing = { probe: options.probe, everyMs: waits.probeEveryMs, sleep, now };
  for (const p of plans) await probeUntilAccepted({ ...probing, withinMs: waits.acceptWithinMs }, p.next);

  const connect: ConnectReport = { apps: [], calls: { list: 0, write: 0 }, dryRun: false };
  for (const [i, p] of plans.entries()) {
    const rotation = rotations[i] as CredentialRotation;
    await renew();
    const part = await switchApps(options, p.apps, p.next);
    mergeReport(connect, part);
    for (const { appId } of p.apps) {
      const failed = part.apps.find((a) => a.appId === appId)?.error;
      const ours = failed
        ? undefined
        : findOurWebhook(await options.api.listWebhooks(appId), options.webhook);
      const switched =
        ours?.username === p.next.username &&
        (ours.password === undefined || ours.password === p.next.password);
      (switched ? rotation.confirmed : rotation.stillOld).push(appId);
    }
    rotation.stillOld.push(...p.unconnected);
    rotation.outcome = rotation.stillOld.length ? "incomplete" : "rotated";
    step(`${rotation.confirmed.length} of ${p.apps.length} apps read back ${p.next.username}`);
    if (p.unconnected.length)
      step(
        `${p.old.username} is kept: ${p.unconnected.length} of its apps were never connected (${preview(p.unconnected)}): connect them first`,
      );
  }

  const done = plans.filter((_, i) => rotations[i]?.outcome === "rotated");
  if (done.length) {
    step(
      `waiting ${Math.round(waits.retireAfterMs / 1000)} s (the platform's retries of deliveries made with ${done.map((p) => p.old.username).join(", ")})`,
    );
    await sleep(waits.retireAfterMs);
    await renew();
    await retire(options.store, done);
    const removedAt = now();
    const acceptedUntil = removedAt + waits.cacheMs;
    step(
      `removed ${done.map((p) => p.old.username).join(", ")}; the ingest's cache accepts ${done.length === 1 ? "it" : "them"} until ${new Date(acceptedUntil).toISOString()} at the latest: waiting until then, probing`,
    );
    await sleep(Math.max(0, acceptedUntil - now()));
    for (const p of done) {
      const rotation = rotations[plans.indexOf(p)] as CredentialRotation;
      Object.assign(rotation, { removedAt, acceptedUntil });
      const refused = await probeUntilRefused({ ...probing, withinMs: waits.refuseWithinMs }, p.old);
      if ("refusedAt" in refused) {
        rotation.refusedAt = refused.refusedAt;
        step(`the ingest refuses ${p.old.username}`);
      } else if (refused.accepted) rotation.outcome = "still-accepted";
      else {
        rotation.outcome = "unconfirmed";
        rotation.unclear = refused.unclear;
        step(`cannot tell whether the ingest refuses ${p.old.username}: it answered ${refused.unclear}`);
      }
    }
  }
  return { ...reportOf(rotations), connect };
}

/** The store without the old credentials of `done`, their new ones kept as plain credentials (re-read: another change since is kept). */
async function retire(store: CredentialStore, done: readonly RotationPlan[]): Promise<void> {
  const olds = new Set(done.map((p) => p.old.username));
  const news = new Set(done.map((p) => p.next.username));
  const current = await store.list();
  await store.write(
    current
      .filter((c) => !olds.has(c.username))
      .map((c) => {
        if (!news.has(c.username)) return c;
        const { replaces: _done, ...kept } = c;
        return kept;
      }),
  );
}

const OUTCOME_ORDER: readonly RotationOutcome[] = [
  "incomplete",
  "still-accepted",
  "unconfirmed",
  "rotated",
  "dry-run",
];

function reportOf(credentials: CredentialRotation[]): RotationReport {
  const outcome = OUTCOME_ORDER.find((o) => credentials.some((c) => c.outcome === o)) ?? "rotated";
  return {
    outcome,
    credentials,
    confirmed: credentials.flatMap((c) => c.confirmed),
    stillOld: credentials.flatMap((c) => c.stillOld),
  };
}

function preview(ids: readonly string[]): string {
  return `${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", …" : ""}`;
}

function mergeReport(into: ConnectReport, part: ConnectReport): void {
  into.apps.push(...part.apps);
  into.calls.list += part.calls.list;
  into.calls.write += part.calls.write;
}

/** The apps' webhooks pointed at `credential` (`connectApps`, once per set of triggers: each app keeps its own). */
async function switchApps(
  options: Pick<RotationOptions, "api" | "registry" | "webhook">,
  apps: readonly ConnectedApp[],
  credential: WebhookCredential,
): Promise<ConnectReport> {
  const byTriggers = new Map<string, { triggers: readonly string[]; appIds: string[] }>();
  for (const { appId, triggers } of apps) {
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
    mergeReport(merged, await connectApps({ api: options.api, registry: options.registry, appIds, desired }));
  }
  return merged;
}

/**
 * The way back from rotations left half-way (a new credential beside its old one, `replaces`):
 * for each (those of `credentials`, or all), every app delivering with either pointed at the old
 * credential again, then the new one removed (one write), holding the rotation lease as a
 * rotation does. After a completed rotation the old credential is gone: the way back is another
 * rotation.
 *
 * @example await restoreCredentials({ store, api, registry, apps, webhook, probe, lock })
 * @throws RotationLockedError, with nothing changed, when a rotation holds the lease
 * @throws CredentialRotationError when there is no rotation to undo
 */
export function restoreCredentials(
  options: Omit<RotationOptions, "fresh" | "dryRun">,
): Promise<RotationReport> {
  return withRotationLock(options.lock, "restore-credentials", options.now ?? Date.now, (renew) =>
    restoreHolding(options, renew),
  );
}

/** `restoreCredentials` holding the rotation lease (`renew` before the store's write). */
async function restoreHolding(
  options: Omit<RotationOptions, "fresh" | "dryRun">,
  renew: () => Promise<void>,
): Promise<RotationReport> {
  const stored = await options.store.list();
  const pending = stored.filter(
    (c) =>
      c.replaces !== undefined &&
      (!options.credentials || options.credentials.includes(c.replaces)) &&
      stored.some((o) => o.username === c.replaces),
  );
  if (pending.length === 0)
    throw new CredentialRotationError("no rotation to undo: no new credential stands beside an old one");
  const connect: ConnectReport = { apps: [], calls: { list: 0, write: 0 }, dryRun: false };
  const rotations: CredentialRotation[] = [];
  for (const next of pending) {
    const old = stored.find((o) => o.username === next.replaces) as WebhookCredential;
    const apps = options.apps.filter((a) => a.username === old.username || a.username === next.username);
    const part = await switchApps(options, apps, old);
    mergeReport(connect, part);
    const stillOld = part.apps.filter((a) => a.error).map((a) => a.appId);
    rotations.push({
      outcome: stillOld.length ? "incomplete" : "rotated",
      from: next.username,
      to: old.username,
      ...(old.appIds ? { appIds: [...old.appIds] } : {}),
      resumed: true,
      apps: apps.map((a) => a.appId),
      confirmed: part.apps.filter((a) => !a.error).map((a) => a.appId),
      stillOld,
      unconnected: [],
    });
  }
  const undone = new Set(rotations.filter((r) => r.outcome === "rotated").map((r) => r.from));
  if (undone.size) {
    await renew();
    await options.store.write(stored.filter((c) => !undone.has(c.username)));
  }
  return { ...reportOf(rotations), connect };
}
