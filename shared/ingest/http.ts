import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";

/** The response shape of the ingest function: API Gateway HTTP API (payload format 2.0). */
export type HttpResponse = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
};

/**
 * Builds a JSON response. Every answer of the ingest goes through here, so that all of them
 * carry the same content type and no-store caching.
 *
 * @example jsonResponse(400, { error: "body is not JSON" })
 */
export function jsonResponse(
  statusCode: number,
  payload: Record<string, unknown>,
  headers: Record<string, string> = {},
): HttpResponse {
  return {
    statusCode,
    headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
    body: JSON.stringify(payload),
  };
}

/** A JSON error: `{"error": code, "message": text}`. */
export function errorResponse(
  statusCode: number,
  error: string,
  message: string,
  headers: Record<string, string> = {},
): HttpResponse {
  return jsonResponse(statusCode, { error, message }, headers);
}
