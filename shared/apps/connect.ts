import pLimit from "p-limit";
import { ManagementAuthError } from "../platform/errors";
import type { AppRegistry } from "./dynamo-app-registry";
import type { ManagementApi, PlatformWebhook, WebhookSettings } from "./management-api";
import { WEBHOOK_ID_MAX_LENGTH } from "./management-api";
import { APP_RECORD } from "./records";

/** What every connected app's webhook should be. */
export interface DesiredWebhook {
  /** Our webhook's id and name on the platform (≤ 50 characters): how a later run finds it. */
  id: string;
  name: string;
  url: string;
  username: string;
  password: string;
  triggers: readonly string[];
}

export type ConnectAction = "create" | "update" | "unchanged";

export interface AppConnection {
  appId: string;
  action: ConnectAction;
  /** The fields an update changes (names only: never a value). */
  changes: string[];
  /** Why it failed, when it did (the other apps carry on). */
  error?: string;
}

export interface ConnectReport {
  apps: AppConnection[];
  /** Management API calls made: lists, and writes (creates and updates). */
  calls: { list: number; write: number };
  dryRun: boolean;
}

export interface ConnectOptions {
  api: ManagementApi;
  registry: AppRegistry;
  appIds: readonly string[];
  desired: DesiredWebhook;
  /** Plan only: read the webhooks, write nothing. */
  dryRun?: boolean;
  /** Apps handled at once. @default 8 */
  concurrency?: number;
  /** Called after each app (progress). */
  onApp?: (connection: AppConnection) => void;
}

/** Which of a platform webhook's fields differ from the desired ones (the password only if the platform shows it). */
export function webhookChanges(current: PlatformWebhook, desired: DesiredWebhook): string[] {
  const changes: string[] = [];
  if (current.webhookURL !== desired.url) changes.push("webhookURL");
  if (current.useBasicAuth !== true) changes.push("useBasicAuth");
  if (current.username !== desired.username) changes.push("username");
  if (current.password !== undefined && current.password !== desired.password) changes.push("password");
  if (current.enabled !== true) changes.push("enabled");
  const have = [...new Set(current.triggers ?? [])].sort().join(",");
  if (have !== [...new Set(desired.triggers)].sort().join(",")) changes.push("triggers");
  if (current.name !== undefined && current.name !== desired.name) changes.push("name");
  return changes;
}

/** Our webhook among an app's: by our id, else by our URL. */
export function findOurWebhook(
  hooks: readonly PlatformWebhook[],
  desired: Pick<DesiredWebhook, "id" | "url">,
): PlatformWebhook | undefined {
  return hooks.find((h) => h.id === desired.id) ?? hooks.find((h) => h.webhookURL === desired.url);
}

/**
 * Points each app's webhook at this deployment: one list per app, then a create (none of its
 * webhooks is ours), an update (ours differs) or nothing. The apps are allowed in the registry
 * before any webhook is written (their first deliveries are accepted), and each webhook recorded
 * after it is written. Idempotent: a second run lists and writes nothing. One app's failure is reported and the
 * others carry on.
 *
 * @example const report = await connectApps({ api, registry, appIds: ["app1"], desired }) // apps[0].action: "create"
 */
export async function connectApps(options: ConnectOptions): Promise<ConnectReport> {
  const { api, registry, desired } = options;
  if (desired.id.length > WEBHOOK_ID_MAX_LENGTH || desired.name.length > WEBHOOK_ID_MAX_LENGTH)
    throw new RangeError(`the webhook's id and name must be at most ${WEBHOOK_ID_MAX_LENGTH} characters`);
  const calls = { list: 0, write: 0 };
  const settings: WebhookSettings = {
    id: desired.id,
    name: desired.name,
    webhookURL: desired.url,
    useBasicAuth: true,
    username: desired.username,
    password: desired.password,
    enabled: true,
    triggers: [...desired.triggers],
  };
  const known = await registry.list();
  const appIds = [...new Set(options.appIds)];
  // Allowed before any webhook is written (its first deliveries are accepted), in batches of 25.
  if (!options.dryRun)
    await registry.allow(
      appIds.filter((appId) => !known.get(appId)?.allowed),
      "connect",
    );
  const limit = pLimit(options.concurrency ?? 8);
  const connectOne = async (appId: string): Promise<AppConnection> => {
    try {
      calls.list++;
      const ours = findOurWebhook(await api.listWebhooks(appId), desired);
      const changes = ours ? webhookChanges(ours, desired) : ["webhook"];
      const action: ConnectAction = !ours ? "create" : changes.length ? "update" : "unchanged";
      if (options.dryRun) return { appId, action, changes };
      const app = known.get(appId);
      const written = { ...settings, id: ours?.id ?? settings.id };
      if (action !== "unchanged") {
        calls.write++;
        if (action === "create") await api.createWebhook(appId, written);
        else await api.updateWebhook(appId, written);
      }
      const record = app?.webhook;
      if (action !== "unchanged" || record?.username !== desired.username || record.url !== desired.url)
        await registry.recordWebhook({
          appId,
          record: APP_RECORD.webhook,
          webhookId: written.id,
          url: desired.url,
          username: desired.username,
          triggers: [...desired.triggers],
          enabled: true,
          updatedAt: new Date().toISOString(),
        });
      return { appId, action, changes };
    } catch (error) {
      // Wrong key or secret: every app would fail alike; stop at the first.
      if (error instanceof ManagementAuthError) throw error;
      return {
        appId,
        action: "unchanged",
        changes: [],
        error: error instanceof Error ? error.message : String(error),
      };
    }
  };
  const apps = await Promise.all(
    appIds.map((appId) =>
      limit(async () => {
        const connection = await connectOne(appId);
        options.onApp?.(connection);
        return connection;
      }),
    ),
  );
  return { apps, calls, dryRun: options.dryRun ?? false };
}
