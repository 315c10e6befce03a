import { type AppAllowlist, cachedAllowlist } from "../../shared/apps/allowlist";
import { dynamoAllowedAppLookup } from "../../shared/apps/dynamo-allowlist";
import type { AwsClientSettings } from "../../shared/platform/aws-clients";
import { dynamoClient } from "../../shared/platform/dynamo-client";

/** How long a refused app is remembered: an app `connect` just allowed is accepted within it. */
const REFUSED_TTL_MS = 5_000;

/**
 * The deployment's app allowlist: the apps table read once per app per `cacheSeconds` (the
 * DynamoDB client is in a chunk of its own (esbuild code splitting): a deployment that does not restrict
 * apps never loads it; one that does loads it during the cold start's init, before the first request).
 *
 * @example const allowlist = (await import("./app-allowlist")).appAllowlist(config.aws, "apps", 60)
 */
export function appAllowlist(
  settings: AwsClientSettings,
  tableName: string,
  cacheSeconds: number,
): AppAllowlist {
  return cachedAllowlist(dynamoAllowedAppLookup(dynamoClient(settings), tableName), {
    allowedTtlMs: cacheSeconds * 1000,
    refusedTtlMs: Math.min(REFUSED_TTL_MS, cacheSeconds * 1000),
  });
}
