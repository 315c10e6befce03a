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

/**
 * Where each app's data import goes, and with which key (#43): the import secret (deployed; read
 * by the operator's `npx webhook import` only, no function) or `IMPORT_API_KEYS` locally:
 * `{"<appId>": {"url": "<import_url>", "apiKey": "<apiKey>"}}`, `url` the app's host followed by
 * `/v3.0/data_import` (spec section 1), over HTTPS (section 1: "all requests must be made over
 * HTTPS"; plain http only to this machine, where the simulator plays the platform).
 */
export const importApiKeysSchema = /* @__PURE__ */ z.record(
  /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1)),
  /* @__PURE__ */ z.object({
    url: /* @__PURE__ */ z
      .string()
      .check(
        /* @__PURE__ */ z.regex(
          /^(https:\/\/[^\s/]+|http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?)(\/\S*)?$/,
          "expected an https:// URL (http:// only to this machine: a simulator)",
        ),
      ),
    apiKey: /* @__PURE__ */ z.string().check(/* @__PURE__ */ z.minLength(1)),
  }),
);
export type ImportApiKeys = z.infer<typeof importApiKeysSchema>;
