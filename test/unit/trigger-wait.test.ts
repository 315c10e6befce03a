import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { postThenWait } from "../../tools/ops/trigger-wait";

// `trigger` then `events` (#52): the e2e test passes even with --no-wait (the events process starts
// slower than the projection), so the wait is proved here, against a projector held back. The
// stack is in memory (a queue, a projector, the events table) because the point is the order of
// what trigger does, which no emulator can hold back on demand; the drain check is the command's
// own rule (the queue empty), injected.

/** A local stack whose projector takes `heldFor` pauses before it projects what is queued. */
function heldBackStack(heldFor: number) {
  const queue: string[] = [];
  const table = new Set<string>();
  let pauses = 0;
  return {
    table,
    post: async () => {
      const eventId = `e${queue.length + table.size + 1}`;
      queue.push(eventId);
      return { eventId };
    },
    drained: async () => queue.length === 0,
    /** The clock: each pause lets the projector get one step nearer; after `heldFor` it projects all. */
    sleep: async () => {
      pauses += 1;
      if (pauses >= heldFor) for (const id of queue.splice(0)) table.add(id);
    },
  };
}

/** `trigger`'s post then wait (10 s in pauses of 100 ms, as the command) against a stack held back `heldFor` pauses. */
async function triggerAgainst(heldFor: number) {
  const stack = heldBackStack(heldFor);
  const answer = await postThenWait(stack.post, {
    drained: stack.drained,
    waitMs: 10_000,
    pauseMs: 100,
    sleep: stack.sleep,
  });
  // What `events` typed next reads: the table, right after trigger returned.
  return { ...answer, inTable: stack.table.has(answer.eventId) };
}

describe("trigger waits for its projection (#52)", () => {
  it("returns only once the event is in the events table, however long the projector is held back within the wait", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 100 }), async (heldFor) => {
        const { projected, inTable } = await triggerAgainst(heldFor);
        expect(inTable).toBe(true);
        expect(projected).toBe(true);
      }),
    );
  });

  it("says the event is still in flight when the projector is held back past the wait", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 101, max: 1_000 }), async (heldFor) => {
        const { projected, inTable } = await triggerAgainst(heldFor);
        expect(projected).toBe(false);
        expect(inTable).toBe(false);
      }),
    );
  });

  it("--no-wait returns at once, before the projection (and says nothing of it)", async () => {
    const stack = heldBackStack(1);
    const answer = await postThenWait(stack.post, undefined);
    expect(answer.projected).toBeUndefined();
    expect(stack.table.has(answer.eventId)).toBe(false);
  });
});
