import { createHash, timingSafeEqual } from "node:crypto";
import { ENGLISH } from "@webhook-backend/stream/parse";
import { credentialListSchema, type WebhookCredential, webhookCredentialSchema } from "../contracts/secrets";
import { MAX_AUTHORIZATION_HEADER_LENGTH } from "../platform/constants";
import { CredentialsFormatError } from "../platform/errors";
import type { CredentialSource } from "./credential-source";

/**
 * Parses stored credentials: a list `{"credentials":[…]}`, or a single pair `{username, password}`
 * (the shape of the secret the CDK stack generates). The error names the failing path, never a value.
 */
export function parseCredentialList(json: unknown): WebhookCredential[] {
  const single = webhookCredentialSchema.safeParse(json, ENGLISH);
  if (single.success) return [single.data];
  const parsed = credentialListSchema.safeParse(json, ENGLISH);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new CredentialsFormatError(`credential list is invalid: ${where}`, { cause: parsed.error });
  }
  return parsed.data.credentials;
}

/** A fixed list, for the local stack and tests. */
export function staticCredentialSource(credentials: WebhookCredential[]): CredentialSource {
  return { get: async () => credentials, refresh: async () => undefined };
}

export type BasicAuthOutcome =
  | { ok: true; credential: WebhookCredential }
  | { ok: false; reason: "missing" | "malformed" }
  /**
   * `username`: the one presented (never the password), to attribute refusals to apps (#52);
   * `known`: the deployment holds a credential of that name, or one a rotation replaces (a wrong
   * password: someone's webhook, not a scanner's guess, #58).
   */
  | { ok: false; reason: "invalid"; username: string; known: boolean };

interface DecodedBasic {
  username: string;
  password: string;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Decodes an `Authorization: Basic ...` header. Refuses over-long headers before any decoding,
 * a scheme other than Basic, non-canonical base64 and a missing colon.
 *
 * @example decodeBasicAuthorization("Basic dTpw") // { username: "u", password: "p" }
 */
export function decodeBasicAuthorization(header: string | undefined): DecodedBasic | "missing" | "malformed" {
  if (header === undefined || header.length === 0) return "missing";
  if (header.length > MAX_AUTHORIZATION_HEADER_LENGTH) return "malformed";
  const match = /^Basic +(\S+) *$/i.exec(header);
  const token = match?.[1];
  if (token === undefined || token.length % 4 !== 0 || !BASE64.test(token)) return "malformed";
  const decoded = Buffer.from(token, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return "malformed";
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * The `Authorization` header of a Basic pair: what the platform sends, and what the tools that play
 * it (the simulator, `trigger`, `rotate-credentials`'s probe) send. The inverse of
 * `decodeBasicAuthorization`.
 *
 * @example basicAuthorization("u", "p") // "Basic dTpw"
 */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/**
 * Finds the credential that matches `candidate`, in constant time with respect to the secrets:
 * both sides are hashed to 32 bytes (so lengths never differ and never throw), and every stored
 * pair is compared whatever the outcome of the others.
 */
export function matchCredential(
  candidate: DecodedBasic,
  credentials: readonly WebhookCredential[],
): WebhookCredential | undefined {
  const user = digest(candidate.username);
  const pass = digest(candidate.password);
  let found: WebhookCredential | undefined;
  for (const credential of credentials) {
    const userOk = timingSafeEqual(user, digest(credential.username));
    const passOk = timingSafeEqual(pass, digest(credential.password));
    if (userOk && passOk && found === undefined) found = credential;
  }
  return found;
}

/**
 * Authenticates a request's `Authorization` header against the source. On a miss the source is
 * re-read once (a rotated secret becomes valid without waiting for the cache to expire).
 */
export async function authenticateBasic(
  header: string | undefined,
  source: CredentialSource,
): Promise<BasicAuthOutcome> {
  const decoded = decodeBasicAuthorization(header);
  if (decoded === "missing" || decoded === "malformed") return { ok: false, reason: decoded };
  const match = matchCredential(decoded, await source.get());
  if (match) return { ok: true, credential: match };
  const refreshed = await source.refresh();
  const retry = refreshed ? matchCredential(decoded, refreshed) : undefined;
  if (retry) return { ok: true, credential: retry };
  const held = refreshed ?? (await source.get());
  const known = held.some((c) => c.username === decoded.username || c.replaces === decoded.username);
  return { ok: false, reason: "invalid", username: decoded.username, known };
}

/** Whether the credential may deliver events of `appId` (unrestricted pairs may deliver any). */
export function credentialAllowsApp(credential: WebhookCredential, appId: string | undefined): boolean {
  if (!credential.appIds) return true;
  return appId !== undefined && credential.appIds.includes(appId);
}

/**
 * The credential an app's webhook should deliver with: the newest (last) that names the app in
 * its `appIds`, else the newest that any app may use; never one a rotation is replacing (its new
 * one is handed out instead). Undefined when none allows the app.
 *
 * @example credentialForApp([{ username: "any", … }, { username: "a1", appIds: ["app1"], … }], "app1") // the "a1" pair
 */
export function credentialForApp(
  credentials: readonly WebhookCredential[],
  appId: string,
): WebhookCredential | undefined {
  const usable = credentials.filter(
    (c) => credentialAllowsApp(c, appId) && !credentials.some((o) => o.replaces === c.username),
  );
  return usable.findLast((c) => c.appIds !== undefined) ?? usable.at(-1);
}
