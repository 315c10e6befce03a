/**
 * Bundled in place of `@aws-sdk/credential-provider-node` (see `infra/bundling.ts`).
 *
 * Lambda always hands a function its role's credentials in environment variables, so the
 * default chain's other providers (SSO, INI files, IMDS, web identity, process) and the STS/SSO
 * clients they pull in are dead weight in a function bundle: about 90 KB of code parsed on every
 * cold start. Locally the code runs unbundled and keeps the full chain.
 */
import { fromEnv } from "@aws-sdk/credential-provider-env";

export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
export const credentialsWillNeedRefresh = () => false;
export const credentialsTreatedAsExpired = () => false;
