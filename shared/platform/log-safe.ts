/**
 * What a caller sent, made safe to log (#58). A log line is read on an operator's terminal
 * (`npm start`, stack.log, `aws logs tail`), where a control character (a newline, an ANSI escape)
 * forges lines and colours: every one is replaced. A username may be a secret typed into the
 * wrong field (a password, an API key): it is logged as a short prefix and a hash, which name the
 * caller as well (`apps --refused` compares the same form), never in full.
 */
import { createHash } from "node:crypto";

/** C0 and C1 controls, DEL, and the invisible format characters that reorder or hide text (bidi overrides). */
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

/**
 * The text with each control or format character replaced by `?`.
 *
 * @example printable("a\nERROR forged\u001b[31m") // "a?ERROR forged?[31m"
 */
export function printable(text: string): string {
  return text.replace(UNSAFE, "?");
}

/** Characters of a username kept as they are in its logged prefix (anything else is `_`). */
const PREFIX_SAFE = /[^A-Za-z0-9._-]/g;

/**
 * A username as the logs keep it: at most 4 of its first characters (no more than a quarter of
 * it), a colon, and 12 hex digits of its SHA-256. No Basic username holds a colon (the first ends
 * it), so a logged form is never taken for a username. The prefix tells a person whose it is
 * (`webh:…`), the hash tells two apart and is what `apps --refused` matches.
 *
 * @example loggedUsername("webhook-backend-prod") // "webh:3b5d5c3712f9" (the hash differs)
 */
export function loggedUsername(username: string): string {
  const prefix = [...username].slice(0, Math.min(4, Math.floor([...username].length / 4))).join("");
  const hash = createHash("sha256").update(username, "utf8").digest("hex").slice(0, 12);
  return `${prefix.replace(PREFIX_SAFE, "_")}:${hash}`;
}
