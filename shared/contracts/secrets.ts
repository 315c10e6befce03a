import * as z from "zod/mini";

/**
 * The secrets' contents, defined once: the CDK stack generates or imports them, the functions
 * parse them (through Powertools Parameters in AWS, from the environment locally).
 */

/**
 * One accepted Basic-auth pair. `appIds`, when present, limits the pair to those apps.
 * `replaces`, while a rotation is under way, names the credential this one will replace (both are
 * accepted until the rotation retires the old one: `shared/apps/rotate.ts`); the ingest ignores it.
 * The platform allows usernames of at most 50 characters and passwords of at most 100.
 */
export const webhookCredentialSchema = z.object({
  username: z.string().check(z.minLength(1), z.maxLength(50)),
  password: z.string().check(z.minLength(1), z.maxLength(100)),
  appIds: z.optional(z.array(z.string().check(z.minLength(1))).check(z.minLength(1))),
  replaces: z.optional(z.string().check(z.minLength(1), z.maxLength(50))),
});
export type WebhookCredential = z.infer<typeof webhookCredentialSchema>;

/**
 * The credential list as stored in the Secrets Manager secret (or `WEBHOOK_CREDENTIALS` locally).
 * A list, so that an old and a new pair are both valid during a rotation.
 */
export const credentialListSchema = z.object({
  credentials: z.array(webhookCredentialSchema).check(z.minLength(1)),
});

/** The recording API keys secret (or `RECORDING_API_KEYS` locally): `{"<appId>": "<apiKey>"}`. */
export const recordingApiKeysSchema = /* @__PURE__ */ z.record(
  /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1)),
  /* @__PURE__ */ z.string(),
);
export type RecordingApiKeys = z.infer<typeof recordingApiKeysSchema>;
