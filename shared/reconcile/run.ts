import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { PresenceState } from "@webhook-backend/stream/projections/presence";
import type { ItemStore } from "../ports/item-store";
import { onlineUids } from "./dynamo-online-users";
import type { ReconcileFactSink } from "./fact-sink";
import { listPlatformUsers, platformBaseUrl } from "./platform-users";
import { type ReconcileSummary, reconcilePresence } from "./reconcile";

export interface ReconcileAllDependencies {
  doc: DynamoDBDocumentClient;
  presenceTable: string;
  presence: ItemStore<PresenceState>;
  apiKeyFor(appId: string): Promise<string | undefined>;
  now: () => number;
  fetch?: typeof fetch;
  /** Where the facts that changed an item go: the archive and the stream (`fact-sink.ts`, filled by `shared/stream/reconcile-facts.ts`). @default none */
  facts?: ReconcileFactSink;
}

/**
 * Reconciles every app of a deployment, one after the other (each reads its own listing); an app
 * that fails does not stop the others.
 *
 * @example await reconcileAll({ app1: "eu" }, deps) // [{ appId: "app1", summary: {...} }]
 */
export async function reconcileAll(
  apps: Record<string, "us" | "eu" | "in">,
  deps: ReconcileAllDependencies,
): Promise<Array<{ appId: string; summary?: ReconcileSummary; error?: unknown }>> {
  const results: Array<{ appId: string; summary?: ReconcileSummary; error?: unknown }> = [];
  for (const [appId, region] of Object.entries(apps)) {
    try {
      const apiKey = await deps.apiKeyFor(appId);
      if (!apiKey) throw new Error(`the API-keys secret has no key for app ${appId}`);
      const fetchedAt = deps.now();
      const listing = await listPlatformUsers({
        baseUrl: platformBaseUrl(appId, region),
        apiKey,
        appId,
        fetch: deps.fetch,
      });
      const summary = await reconcilePresence({
        appId,
        listing,
        fetchedAt,
        onlineHere: await onlineUids(deps.doc, deps.presenceTable, appId),
        presence: deps.presence,
        ...(deps.facts ? { facts: deps.facts } : {}),
      });
      results.push({ appId, summary });
    } catch (error) {
      results.push({ appId, error });
    }
  }
  return results;
}
