import { InvalidArgumentError } from "commander";
import { triggerFormProblem } from "../../shared/stream/subscribers";
import { eventIdPrefix } from "./event-id";

/**
 * The filters every command takes in one vocabulary: a trigger form wherever triggers are
 * filtered (`listen`, `replay`, `events`: as a subscriber's `triggers` take them), and one
 * delivery as `listen` names it.
 */

/**
 * A trigger form (commander's parser, repeatable): an exact name (`message_sent`), a family
 * (`group:*`) or a prefix (`group_member_*`); anything else is a usage error (exit 2) that says
 * what was meant.
 *
 * @example program.option("--trigger <trigger...>", "only these triggers", triggerForm)
 */
export function triggerForm(value: string, previous: string[] = []): string[] {
  const problem = triggerFormProblem(value);
  if (problem) throw new InvalidArgumentError(`${problem}.`);
  return [...previous, value];
}

/**
 * One delivery as `listen` prints it and `--json` gives it: `<eventId>@<receivedAt>`, the event
 * id whole or a prefix of at least 12 hex characters, the receipt in epoch ms.
 *
 * @example deliveryRef("5f0c1d2e3f4a5b6c@1763000000300") // { eventId: "5f0c1d2e3f4a5b6c", receivedAt: 1763000000300 }
 */
export function deliveryRef(value: string): { eventId: string; receivedAt: number } {
  const [id = "", at = "", ...rest] = value.trim().split("@");
  const receivedAt = Number(at);
  if (rest.length || !/^\d{1,15}$/.test(at) || !Number.isSafeInteger(receivedAt))
    throw new InvalidArgumentError(
      `expected a delivery as listen prints it, <eventId>@<receivedAt> (its receipt in epoch ms), not "${value}".`,
    );
  return { eventId: eventIdPrefix(id), receivedAt };
}
