/**
 * The local stack's stand-in for Contributor Insights (#58): each refusal of a known username the
 * log tap counted with the deployed rule (`refusalInsightRule`), one NDJSON line in the state
 * directory, read back as the top refused usernames (`npx webhook apps --refused`).
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RefusedUsername } from "../../shared/watchdog/refused-report";

const FILE = "refusals.ndjson";

/** Appends one refusal (synchronously: on disk before the request's log line is done). */
export function appendRefusal(dir: string, username: string, at: number): void {
  appendFileSync(join(dir, FILE), `${JSON.stringify({ at, username })}\n`);
}

/** The usernames refused since `since` (ms), the most refused first. */
export function refusals(dir: string, since: number): RefusedUsername[] {
  const file = join(dir, FILE);
  if (!existsSync(file)) return [];
  const counts = new Map<string, { refusals: number; lastAt: number }>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    let value: { at?: unknown; username?: unknown };
    try {
      value = line ? JSON.parse(line) : {};
    } catch {
      continue; // a line cut short by a kill
    }
    if (typeof value.at !== "number" || typeof value.username !== "string" || value.at < since) continue;
    const c = counts.get(value.username) ?? { refusals: 0, lastAt: 0 };
    c.refusals++;
    c.lastAt = Math.max(c.lastAt, value.at);
    counts.set(value.username, c);
  }
  return [...counts]
    .map(([username, c]) => ({ username, ...c }))
    .sort((a, b) => b.refusals - a.refusals || (a.username < b.username ? -1 : 1));
}
