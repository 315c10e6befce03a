import { wrapLine } from "../cli/format";
import type { EventTrace } from "./trace";

/**
 * `webhook verify`: one delivery followed through a deployment (or the local stack), end to end,
 * each step with what it found. The steps, in order:
 * 1. `delivered`: a `group_created` of a group no one else has (`verify-<run id>`, from the
 *    simulator's template), POSTed to the webhook URL with a credential the app may use, answered
 *    200 with its event id;
 * 2. `archived line`: its line in the raw archive (`traceEvent`: the archive object's key);
 * 3. `table row`: the groups table holds the group, as the line's projection says (`includes it`);
 * 4. `stream message`: the envelope of that delivery, received by a temporary listener subscribed
 *    to the stream's topic for the app before the delivery (`openListener`);
 * 5. `figure`: after a rollup of the app's day (the engine the deployment runs: Athena, or DuckDB
 *    locally), the day's `groups_created` counts the group.
 * A step not done within the time allowed fails with what was seen; the later steps still run
 * where they can (the figure does not need the stream). The delivery's app is `--app` (default
 * `webhook-verify`): with `restrictApps` on, an app the deployment allows.
 */
export type VerifyStepName = "delivered" | "archived line" | "table row" | "stream message" | "figure";

export interface VerifyStep {
  step: VerifyStepName;
  ok: boolean;
  detail: string;
}

export interface VerifyReport {
  app: string;
  eventId?: string;
  steps: VerifyStep[];
  ok: boolean;
}

/** What `verifyDeployment` does its steps with: the command wires them to a target. */
export interface VerifyDependencies {
  /**
   * POSTs the run's delivery (a `group_created` of a group only this run creates, dated now) to
   * the webhook with a credential the app may use; its event id, or throws with the answer.
   */
  deliver(): Promise<string>;
  /** What became of the event (`traceEvent`). */
  trace(eventId: string): Promise<EventTrace>;
  /** The stream envelopes' delivery ids received since the listener opened (removed from its queue). */
  received(): Promise<string[]>;
  /** Recomputes the app's day; resolves when its figures are written. */
  rollup(app: string, day: string): Promise<void>;
  /** The app's day's `groups_created`, or undefined when the day has no figures. */
  groupsCreated(app: string, day: string): Promise<number | undefined>;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** How long a step may wait for what it looks for (ms). */
  waitMs: number;
  /** How often it looks again (ms). */
  pollMs: number;
}

/**
 * Runs the five steps; the report says which held. Exits nothing: the command prints the report
 * and sets the exit code.
 *
 * @example (await verifyDeployment(deps, "webhook-verify")).ok // true
 */
export async function verifyDeployment(deps: VerifyDependencies, app: string): Promise<VerifyReport> {
  const steps: VerifyStep[] = [];
  const started = deps.now();
  const day = new Date(started).toISOString().slice(0, 10);
  let eventId: string;
  try {
    eventId = await deps.deliver();
    steps.push({ step: "delivered", ok: true, detail: `accepted as event ${eventId}` });
  } catch (error) {
    steps.push({ step: "delivered", ok: false, detail: messageOf(error) });
    return { app, steps, ok: false };
  }
  /** Looks until `found` says what it saw, or the time allowed is over. */
  const until = async <T>(look: () => Promise<T>, done: (t: T) => boolean): Promise<T> => {
    const deadline = deps.now() + deps.waitMs;
    let seen = await look();
    while (!done(seen) && deps.now() < deadline) {
      await deps.sleep(deps.pollMs);
      seen = await look();
    }
    return seen;
  };
  const trace = await until(
    () => deps.trace(eventId),
    (t) => t.outcome !== "pending" && (t.items ?? []).every((i) => i.state !== "does not have it yet"),
  );
  steps.push({
    step: "archived line",
    ok: trace.key !== undefined,
    detail: trace.key
      ? `in ${trace.key}`
      : `not archived: ${trace.outcome}${trace.note ? ` (${trace.note})` : ""}`,
  });
  const group = trace.items?.find((i) => i.table === "groups");
  steps.push({
    step: "table row",
    ok: trace.outcome === "projected" && group?.state === "includes it",
    detail: group
      ? `groups ${JSON.stringify(group.key)}: ${group.state}`
      : `no groups item: ${trace.outcome}`,
  });
  const ids = new Set<string>();
  await until(
    async () => {
      for (const id of await deps.received()) ids.add(id);
      return ids;
    },
    (seen) => [...seen].some((id) => id.startsWith(`${eventId}@`)),
  );
  const heard = [...ids].find((id) => id.startsWith(`${eventId}@`));
  steps.push({
    step: "stream message",
    ok: heard !== undefined,
    detail: heard
      ? `received delivery ${heard}`
      : `not received within ${Math.round(deps.waitMs / 1000)} s (${ids.size} others)`,
  });
  try {
    await deps.rollup(app, day);
    const created = await deps.groupsCreated(app, day);
    steps.push({
      step: "figure",
      ok: created !== undefined && created >= 1,
      detail: `groups_created of ${app} on ${day}: ${created ?? "no figures"}`,
    });
  } catch (error) {
    steps.push({ step: "figure", ok: false, detail: `the rollup failed: ${messageOf(error)}` });
  }
  return { app, eventId, steps, ok: steps.every((s) => s.ok) };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The report as lines within 100 columns: one per step (its detail wrapped under itself), then the verdict. */
export function verifyLines(report: VerifyReport): string[] {
  const under = " ".repeat(22);
  return [
    ...report.steps.flatMap((s) =>
      wrapLine(`${s.ok ? "ok  " : "FAIL"}  ${s.step.padEnd(14)}  ${s.detail}`, 100, under),
    ),
    ...wrapLine(
      report.ok
        ? `verified: one delivery of ${report.app} went through the whole pipeline`
        : `not verified: ${report.steps
            .filter((s) => !s.ok)
            .map((s) => s.step)
            .join(", ")} failed (docs/deploy.md "Verify a deployment")`,
    ),
  ];
}
