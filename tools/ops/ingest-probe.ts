import type { ProbeAnswer } from "../../shared/apps/ingest-probe";
import { probeAnswer } from "../../shared/apps/ingest-probe";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { basicAuthorization } from "../../shared/ingest/credentials";

/**
 * The probe of a deployment's ingest at `webhookUrl`: a POST with the credential and an empty
 * body (refused as a bad request once authenticated, with 401 before; nothing is stored either
 * way). A request that gets no answer is unclear, with why.
 *
 * @example const probe = ingestProbe("https://abc.execute-api.eu-west-1.amazonaws.com/webhook"); await probe(credential) // "accepted"
 */
export function ingestProbe(
  webhookUrl: string,
  fetchImpl: typeof fetch = fetch,
): (credential: WebhookCredential) => Promise<ProbeAnswer> {
  return async (credential) => {
    try {
      const response = await fetchImpl(webhookUrl, {
        method: "POST",
        headers: {
          authorization: basicAuthorization(credential.username, credential.password),
          "content-type": "application/json",
        },
        body: "",
      });
      await response.body?.cancel();
      return probeAnswer(response.status);
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return { unclear: `no answer (${cause ?? (error instanceof Error ? error.message : String(error))})` };
    }
  };
}
