import { type ParsedEvent, parseWebhookEvent } from "./schemas";

/**
 * A raw body as an event: known, unknown (archived only), or invalid with why (not JSON, or the schema's error).
 * The projector parses each event of a batch once and hands the result to the archive and the tables.
 *
 * @example parseEventBody('{"trigger":"group_created",…}').kind // "known"
 */
export function parseEventBody(body: string): ParsedEvent {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { kind: "invalid", trigger: "(none)", error: "body is not valid JSON" };
  }
  return parseWebhookEvent(json);
}
