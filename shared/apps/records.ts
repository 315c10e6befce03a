import * as z from "zod/mini";

/** The kinds of record an app has in the apps table (`APPS_TABLE`'s sort key). */
export const APP_RECORD = { allowed: "allowed", webhook: "webhook" } as const;

/** `allowed`: the app may deliver. `since`: when it was allowed (ISO), `by`: what allowed it. */
export const allowedRecordSchema = z.object({
  appId: z.string().check(z.minLength(1)),
  record: z.literal(APP_RECORD.allowed),
  since: z.optional(z.string()),
  by: z.optional(z.string()),
});
export type AllowedRecord = z.infer<typeof allowedRecordSchema>;

/**
 * `webhook`: the platform webhook `connect` pointed at this deployment, as last read back from the
 * management API. `username` says which Basic credential it delivers with (never the password).
 */
export const webhookRecordSchema = z.object({
  appId: z.string().check(z.minLength(1)),
  record: z.literal(APP_RECORD.webhook),
  webhookId: z.string().check(z.minLength(1)),
  url: z.string(),
  username: z.string(),
  triggers: z.array(z.string()),
  enabled: z.boolean(),
  updatedAt: z.string(),
});
export type WebhookRecord = z.infer<typeof webhookRecordSchema>;
