/**
 * The webhook's secret path segment (#60): 16 to 128 letters, digits, `-` or `_`, as
 * `openssl rand -hex 16` makes. A request to any other path matches no route: API Gateway answers
 * 404 itself, and the ingest never runs.
 */
export const WEBHOOK_PATH_TOKEN = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * The path of the webhook route: `/webhook/<token>`, or `/webhook` without a token. One
 * definition for the deployed route and the local gateway.
 *
 * @example webhookPath("3f9c0e…") // "/webhook/3f9c0e…"
 */
export function webhookPath(token?: string): string {
  return token ? `/webhook/${token}` : "/webhook";
}
