/** The watchdog's silent apps as a log line gives them (the rollup's WARN 'apps silent', #52). */
import type { SilenceReport } from "./silence";

/** A duration for a person: `45 min`, `3 h 05 min`, `2 d 4 h`. @example duration(2_700_000) // "45 min" */
export function duration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${String(minutes % 60).padStart(2, "0")} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** The rollup's WARN line's fields: how many, and the first 20 apps with since when and for how long. */
export function silenceLogFields(report: SilenceReport): Record<string, unknown> {
  return {
    silent: report.silent.length,
    judged: report.judged,
    apps: report.silent.slice(0, 20).map((s) => ({
      appId: s.appId,
      lastSeenAt: new Date(s.lastSeenAt).toISOString(),
      silentFor: duration(s.silentForMs),
    })),
  };
}
