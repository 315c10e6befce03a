import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  ScanCommand,
} from "@aws-sdk/lib-dynamodb";
import { ENGLISH } from "@webhook-backend/stream/parse";
import { StorageError } from "../platform/errors";
import { APP_RECORD, allowedRecordSchema, type WebhookRecord, webhookRecordSchema } from "./records";

/** BatchWriteItem's limit of requests per call. */
const BATCH_WRITE_ITEMS = 25;
/** Attempts at a batch's unprocessed items before giving up. */
const BATCH_WRITE_ATTEMPTS = 8;

/** What the deployment knows of an app. */
export interface KnownApp {
  appId: string;
  allowed: boolean;
  webhook?: WebhookRecord;
}

/**
 * The apps table as the operator's tools see it: allow apps, record the webhook `connect` made,
 * list every app. Not the ingest's path (that reads one key, `./dynamo-allowlist`).
 */
export interface AppRegistry {
  /** Records each app as allowed (idempotent: an allowed app stays as it was allowed first). */
  allow(appIds: readonly string[], by: string): Promise<void>;
  recordWebhook(record: WebhookRecord): Promise<void>;
  /** Every app with a record, by id (one paginated Scan: an operator's command, not a delivery's path). */
  list(): Promise<Map<string, KnownApp>>;
}

/**
 * The registry in DynamoDB (the apps table, `APPS_TABLE`).
 *
 * @example const registry = dynamoAppRegistry(documentClient(dynamo), "apps"); await registry.allow(["app1"], "connect")
 */
export function dynamoAppRegistry(doc: DynamoDBDocumentClient, tableName: string): AppRegistry {
  return {
    allow: async (appIds, by) => {
      const since = new Date().toISOString();
      const unique = [...new Set(appIds)];
      for (let i = 0; i < unique.length; i += BATCH_WRITE_ITEMS) {
        const items = unique
          .slice(i, i + BATCH_WRITE_ITEMS)
          .map((appId) => ({ PutRequest: { Item: { appId, record: APP_RECORD.allowed, since, by } } }));
        await batchWrite(doc, tableName, items);
      }
    },
    recordWebhook: async (record) => {
      await doc.send(new PutCommand({ TableName: tableName, Item: record }));
    },
    list: async () => {
      const apps = new Map<string, KnownApp>();
      const known = (appId: string) => {
        let app = apps.get(appId);
        if (!app) {
          app = { appId, allowed: false };
          apps.set(appId, app);
        }
        return app;
      };
      let ExclusiveStartKey: Record<string, unknown> | undefined;
      do {
        const out = await doc.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey }));
        for (const item of out.Items ?? []) {
          const allowed = allowedRecordSchema.safeParse(item, ENGLISH);
          if (allowed.success) known(allowed.data.appId).allowed = true;
          const webhook = webhookRecordSchema.safeParse(item, ENGLISH);
          if (webhook.success) known(webhook.data.appId).webhook = webhook.data;
        }
        ExclusiveStartKey = out.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      return apps;
    },
  };
}

async function batchWrite(
  doc: DynamoDBDocumentClient,
  tableName: string,
  requests: Array<Record<string, unknown>>,
): Promise<void> {
  let pending = requests;
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= BATCH_WRITE_ATTEMPTS)
      throw new StorageError(`${pending.length} apps table writes stayed unprocessed (throttled)`);
    if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
    const out = await doc.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
    pending = out.UnprocessedItems?.[tableName] ?? [];
  }
}
