import { membershipAnomaly } from "./accessors.ts";
import { type ParsedEvent, parseWebhookEvent } from "./schemas.ts";

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

/**
 * Why the projector refuses a parsed event (it is quarantined with this reason), or undefined
 * when it accepts it: a body that fails its schema, or a known event that cannot be applied as it
 * came (`membershipAnomaly`: a kick, ban or unban naming only its actor).
 *
 * @example refusalOf(parseEventBody("{")) // "body is not valid JSON"
 */
export function refusalOf(parsed: ParsedEvent): string | undefined {
  if (parsed.kind === "invalid") return parsed.error;
  if (parsed.kind === "known") return membershipAnomaly(parsed.event);
  return undefined;
}
