/**
 * The platform's side of each connected app (#52): its webhook read back through the management
 * API (`listWebhooks`) and judged against this deployment: missing, disabled, pointing elsewhere,
 * delivering with a username the ingest no longer accepts, or subscribed to fewer triggers than
 * `connect` set (the apps table's record, #58). Run from the operator's side
 * (`npx webhook apps --check`): no function holds the management secret, which can delete
 * webhooks and create apps. Streaming (a finding as soon as its app is read), a bounded number of
 * apps at once, each 429 and 5xx retried by the adapter (`Retry-After` first); resumable from the
 * app after the last one reported (`after`).
 */
import pLimit from "p-limit";
import { findOurWebhook } from "../apps/connect";
import type { KnownApp } from "../apps/dynamo-app-registry";
import type { ManagementApi } from "../apps/management-api";
import { ManagementAuthError } from "../platform/errors";

/** What is wrong with an app's webhook on the platform's side. */
export type WebhookProblem =
  | "missing"
  | "disabled"
  | "points-elsewhere"
  | "no-basic-auth"
  | "username-refused"
  | "triggers-narrowed";

export interface WebhookFinding {
  appId: string;
  /** ok; a problem; or `unchecked` (the management API did not answer, after its retries). */
  state: "ok" | WebhookProblem | "unchecked";
  /** What was read, in a sentence (a URL or username: never a password). */
  detail: string;
}

export interface PlatformCheckOptions {
  api: ManagementApi;
  /** The apps to check: those `connect` recorded a webhook for (the apps table). */
  apps: readonly KnownApp[];
  /** Where this deployment receives deliveries. */
  webhookUrl: string;
  /** The usernames the ingest accepts for an app now (its credentials that allow the app). */
  acceptedUsernames: (appId: string) => readonly string[];
  /** Apps read at once. @default 4 (the platform's rate limit is not published) */
  concurrency?: number;
  /** Resume: check only the apps whose id sorts after this one. */
  after?: string;
  /** Each app's finding as soon as it is read (in the order they complete). */
  onFinding: (finding: WebhookFinding) => void;
}

/**
 * Judges one app's webhooks against this deployment (pure).
 *
 * @example judgeWebhook("app1", hooks, { webhookId: "webhook-backend-prod", url, accepted: ["u2"] }) // { state: "username-refused", … }
 */
export function judgeWebhook(
  appId: string,
  hooks: Parameters<typeof findOurWebhook>[0],
  ours: { webhookId: string; url: string; accepted: readonly string[]; triggers?: readonly string[] },
): WebhookFinding {
  const hook = findOurWebhook(hooks, { id: ours.webhookId, url: ours.url });
  if (!hook)
    return {
      appId,
      state: "missing",
      detail: `no webhook ${ours.webhookId} or to ${ours.url} on the platform`,
    };
  if (hook.enabled === false) return { appId, state: "disabled", detail: `webhook ${hook.id} is disabled` };
  if (hook.webhookURL !== ours.url)
    return {
      appId,
      state: "points-elsewhere",
      detail: `webhook ${hook.id} delivers to ${hook.webhookURL ?? "(none)"}`,
    };
  if (hook.useBasicAuth === false)
    return {
      appId,
      state: "no-basic-auth",
      detail: `webhook ${hook.id} sends no credentials (refused: 401)`,
    };
  if (hook.username !== undefined && !ours.accepted.includes(hook.username))
    return {
      appId,
      state: "username-refused",
      detail: `webhook ${hook.id} delivers as ${hook.username}, which the ingest no longer accepts (401)`,
    };
  // Triggers unticked on the platform: volume falls (to presence only, say) without stopping.
  const subscribed = new Set(hook.triggers ?? ours.triggers ?? []);
  const missing = (hook.triggers === undefined ? [] : (ours.triggers ?? [])).filter(
    (t) => !subscribed.has(t),
  );
  if (missing.length)
    return {
      appId,
      state: "triggers-narrowed",
      detail: `webhook ${hook.id} subscribes ${hook.triggers?.length ?? 0} of the ${ours.triggers?.length} triggers connect set: not ${missing.slice(0, 5).join(", ")}${missing.length > 5 ? ` and ${missing.length - 5} more` : ""}`,
    };
  return { appId, state: "ok", detail: `webhook ${hook.id} enabled, to this deployment` };
}

/** What a check found, counted by state. */
export type CheckCounts = Record<WebhookFinding["state"], number>;

/**
 * Reads each connected app's webhooks and reports each as it is judged. One app's failure is its
 * finding (`unchecked`) and the others carry on; a refused key or secret stops the check.
 *
 * @example await checkPlatformWebhooks({ api, apps, webhookUrl, acceptedUsernames, onFinding: print })
 */
export async function checkPlatformWebhooks(options: PlatformCheckOptions): Promise<CheckCounts> {
  const counts: CheckCounts = {
    ok: 0,
    missing: 0,
    disabled: 0,
    "points-elsewhere": 0,
    "no-basic-auth": 0,
    "username-refused": 0,
    "triggers-narrowed": 0,
    unchecked: 0,
  };
  const limit = pLimit(options.concurrency ?? 4);
  const apps = options.apps
    .filter((a) => a.webhook && (options.after === undefined || a.appId > options.after))
    .sort((a, b) => (a.appId < b.appId ? -1 : 1));
  await Promise.all(
    apps.map((app) =>
      limit(async () => {
        let finding: WebhookFinding;
        try {
          finding = judgeWebhook(app.appId, await options.api.listWebhooks(app.appId), {
            webhookId: app.webhook?.webhookId ?? "",
            url: options.webhookUrl,
            accepted: options.acceptedUsernames(app.appId),
            ...(app.webhook?.triggers ? { triggers: app.webhook.triggers } : {}),
          });
        } catch (error) {
          if (error instanceof ManagementAuthError) throw error;
          finding = {
            appId: app.appId,
            state: "unchecked",
            detail: error instanceof Error ? error.message : String(error),
          };
        }
        counts[finding.state]++;
        options.onFinding(finding);
      }),
    ),
  );
  return counts;
}
