/**
 * `trigger`'s wait (#52): once the local stack accepted the event, poll until its projection has
 * drained (the events queue empty: every event taken, projected and deleted), so that the
 * `events` or `query` typed next finds it. The drain check and the pause are injected: the command
 * passes the queue's depth, a test a projector it holds back.
 */
export interface ProjectionWait {
  /** Whether everything accepted has been projected (the command: the events queue's depth is 0). */
  drained: () => Promise<boolean>;
  /** How long to wait at most (the command: 10 s). */
  waitMs: number;
  /** The pause between two checks (the command: 100 ms). */
  pauseMs: number;
  /** Waits `ms` (the command: a timer; a test: its own clock). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Whether the projection drained within `waitMs`: true as soon as a check says so, false once
 * `waitMs` of pauses have passed without (the event still in flight). Counts its pauses, not the
 * wall clock, so a test's held-back projector decides the answer alone.
 *
 * @example await projectionDrained({ drained: async () => true, waitMs: 10_000, pauseMs: 100 }) // true
 */
export async function projectionDrained(w: ProjectionWait): Promise<boolean> {
  const sleep = w.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let waited = 0; ; waited += w.pauseMs) {
    if (await w.drained()) return true;
    if (waited + w.pauseMs > w.waitMs) return false;
    await sleep(w.pauseMs);
  }
}

/**
 * Posts one event, then, when `wait` is given, waits for its projection: the answer says whether
 * it was projected (undefined when not waited for).
 */
export async function postThenWait<T extends { eventId: string }>(
  post: () => Promise<T>,
  wait: ProjectionWait | undefined,
): Promise<T & { projected?: boolean }> {
  const accepted = await post();
  if (!wait) return accepted;
  return { ...accepted, projected: await projectionDrained(wait) };
}
