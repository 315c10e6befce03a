import { KNOWN_TRIGGERS } from "@webhook-backend/stream/events/schemas";
import { OTHER_TRIGGER } from "./outcomes";

/** The value of the `trigger` dimension for a trigger. @example metricTrigger("made_up") // "(other)" */
export function metricTrigger(trigger: string): string {
  return KNOWN_TRIGGERS.has(trigger) ? trigger : OTHER_TRIGGER;
}
