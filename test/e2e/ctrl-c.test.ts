import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../tools/local/emulators";
import { alive } from "../../tools/local/lock";
import { readStats } from "../../tools/local/state";
import { waitForDrain } from "../../tools/simulate/run";
import { postWebhook } from "../support/ingest";
import { archivedEventIds, exited, killAll, memberEvent, startProcess } from "../support/local-process";

afterAll(killAll);

const ROUNDS = 10;
/** Requests in flight while the stack runs: a steady load, bounded (the machine is shared). */
const SENDERS = 4;

const until = async (done: () => boolean, tries = 1200) => {
  for (let i = 0; i < tries && !done(); i++) await new Promise((r) => setTimeout(r, 100));
};

// Each round is a test of its own (a test over 60 s makes vitest's worker RPC time out); they
// share the state directory and the acknowledged events, and the last test restarts the stack.
const dir = mkdtempSync(join(tmpdir(), "ctrl-c-"));
let port = 0;
const acked = new Set<string>();

/**
 * One round: npm start under load from SENDERS senders, then SIGINT to its process group. The
 * events acknowledged join `acked`; the problems found (none expected), with the stack's output.
 */
async function ctrlCRound(round: number) {
  port ||= await freePort();
  const stack = await startProcess(dir, port, [], "npm");
  const { dynamoPid } = JSON.parse(readFileSync(join(dir, "lock.json"), "utf8")) as {
    dynamoPid?: number;
  };
  let sending = true;
  let sent = 0;
  const senders = Array.from({ length: SENDERS }, async (_, s) => {
    for (let i = 0; sending; i++) {
      const { status, eventId } = await postWebhook(
        stack.info,
        memberEvent("ctrl-c-app", round * 1e6 + i * SENDERS + s),
      );
      sent++;
      if (status === 200 && eventId) acked.add(eventId);
      else if (status === 0) return;
    }
  });
  // Under load: some events acknowledged, some batches in flight.
  await until(() => sent >= 150);

  // Act: what Ctrl-C in the terminal sends (the whole foreground process group).
  if (stack.child.pid) process.kill(-stack.child.pid, "SIGINT");
  await until(() => !alive(stack.info.pid) && !alive(dynamoPid));
  sending = false;
  await Promise.all(senders);
  await exited(stack.child);

  const problems = [
    !stack.output().includes("SIGINT: draining and stopping") && "no drain line",
    !stack.output().includes("stopped.") && "no 'stopped.' line",
    alive(stack.info.pid) && "the stack process still runs",
    alive(dynamoPid) && "DynamoDB Local still runs",
    existsSync(join(dir, "lock.json")) && "lock.json left",
    existsSync(join(dir, "stack.json")) && "stack.json left",
    /^\{"level"/m.test(stack.output()) && "raw JSON log lines",
  ].filter(Boolean);
  if (alive(dynamoPid)) process.kill(dynamoPid as number, "SIGKILL");
  return { problems, output: stack.output() };
}

describe("Ctrl-C under load", () => {
  // ROUNDS Ctrl-Cs in all: one in each round's test, the last in the restart's test, which thus
  // has acknowledged events of its own, whatever order the tests run in (issue #56).
  it.each(Array.from({ length: ROUNDS - 1 }, (_, round) => round))(
    "round %i: SIGINT to npm start's process group under load drains and stops: the drain line, no DynamoDB Local, no lock or state file left",
    async (round) => {
      const before = acked.size;
      const { problems, output } = await ctrlCRound(round);
      expect(problems, output.slice(-2000)).toEqual([]);
      // Each round under load (the restart's test asserted more than 100 a round in all).
      expect(acked.size - before).toBeGreaterThan(100);
    },
    300_000,
  );

  it("after a restart, every acknowledged event of every round is archived and counted", async () => {
    // Prepare: a last round (the rounds that ran before this test added theirs).
    const before = acked.size;
    const { problems, output } = await ctrlCRound(ROUNDS - 1);
    expect(problems, output.slice(-2000)).toEqual([]);
    expect(acked.size - before).toBeGreaterThan(100);

    // Act
    const last = await startProcess(dir, port);
    try {
      await waitForDrain(last.info, 120);
      const archived = await archivedEventIds(last.info);
      expect([...acked].filter((id) => !archived.has(id))).toEqual([]);
      const stats = readStats(dir);
      expect(stats.total.ingest?.accepted ?? 0).toBeGreaterThanOrEqual(acked.size);
      const counted = Object.values(stats.total.projector ?? {}).reduce((a, b) => a + b, 0);
      expect(counted).toBeGreaterThanOrEqual(acked.size);
    } finally {
      last.child.kill("SIGINT");
      await exited(last.child);
    }
  }, 300_000);
});
