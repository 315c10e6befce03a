import { OTHER_TRIGGER } from "../platform/outcomes";
import { KNOWN_TRIGGERS } from "./schemas";

/** The value of the `trigger` dimension for a trigger. @example metricTrigger("made_up") // "(other)" */
export function metricTrigger(trigger: string): string {
  return KNOWN_TRIGGERS.has(trigger) ? trigger : OTHER_TRIGGER;
}
