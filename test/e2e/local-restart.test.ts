import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { GetQueueAttributesCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import { emulatorClients } from "../../tools/local/clients";
import { freePort } from "../../tools/local/emulators";
import { alive } from "../../tools/local/lock";
import { STACK_LOG_FILE } from "../../tools/local/log-tap";
import { readStats } from "../../tools/local/state";
import { redrive } from "../../tools/ops/operations";
import { waitForDrain } from "../../tools/simulate/run";
import { runProcess } from "../support/cli";
import { fixture } from "../support/fixtures";
import { postWebhook } from "../support/ingest";
import {
  archivedEventIds,
  exited,
  killAll,
  killMidTraffic,
  type StartedProcess,
  startProcess,
} from "../support/local-process";

afterAll(killAll);

const start = (dir: string, port: number) => startProcess(dir, port);

async function stop(s: StartedProcess, signal: NodeJS.Signals = "SIGINT"): Promise<number | null> {
  s.child.kill(signal);
  return exited(s.child);
}

describe("npm start keeps every acknowledged event", () => {
  it("survives kill -9 of the whole stack mid-traffic: after a restart, every acknowledged event is archived and counted", async () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), "restart-"));
    const port = await freePort();
    const first = await start(dir, port);

    // Act: SIGKILL the stack's process group mid-traffic (its DynamoDB Local is in a group of its own).
    const acked = await killMidTraffic(first, "kill-app");
    const second = await start(dir, port);
    await waitForDrain(second.info, 120);

    // Assess
    expect(acked.size).toBeGreaterThan(10);
    const archived = await archivedEventIds(second.info);
    expect([...acked].filter((id) => !archived.has(id))).toEqual([]);
    const stats = readStats(dir);
    const projected = Object.values(stats.total.projector ?? {}).reduce((a, b) => a + b, 0);
    expect(stats.total.ingest?.accepted ?? 0).toBeGreaterThanOrEqual(acked.size);
    expect(projected).toBeGreaterThanOrEqual(acked.size);
    expect(await stop(second)).toBe(0);
  }, 300_000);

  it("refuses a second start on the same state directory and port, naming the first one's port and pid", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lock-"));
    const port = await freePort();
    const first = await start(dir, port);
    // The same port, as a second `npm start` in another terminal asks for: the lock answers first
    // (the first one answers on that port, so this one is awaited to its exit, not to /health).
    const second = await runProcess(
      "npm",
      ["start", "--silent", "--", "--port", String(port), "--state-dir", dir],
      {
        cwd: new URL("../../", import.meta.url).pathname,
        timeout: 60_000,
      },
    );
    expect(second.status, second.stderr).toBe(1);
    expect(second.stderr).toContain(`is in use by another npm start (pid ${first.info.pid}, port ${port})`);
    expect(second.stderr).not.toContain("already in use");
    expect(await stop(first)).toBe(0);
  }, 300_000);

  it("drains and stops on SIGHUP (the terminal closed), and a restart has the data, the archive and the counters", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sighup-"));
    const port = await freePort();
    const first = await start(dir, port);
    const body = JSON.stringify({ ...fixture("group_created"), appId: "hup-app" });
    expect((await postWebhook(first.info, body)).status).toBe(200);
    await waitForDrain(first.info, 30);

    // A closed terminal sends SIGHUP to the whole foreground process group.
    if (first.child.pid) process.kill(-first.child.pid, "SIGHUP");
    await exited(first.child);
    for (let i = 0; i < 100 && alive(first.info.pid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(first.info.pid)).toBe(false);
    expect(first.output()).toContain("SIGHUP: draining and stopping");
    expect(existsSync(join(dir, "stack.json"))).toBe(false);
    expect(existsSync(join(dir, "lock.json"))).toBe(false);
    const second = await start(dir, port);

    const eventId = createHash("sha256").update(body).digest("hex");
    expect(await archivedEventIds(second.info)).toContain(eventId);
    expect(readStats(dir).apps["hup-app"]?.projector?.projected).toBe(1);
    expect(await stop(second)).toBe(0);
  }, 300_000);

  it("sends a failing event to the DLQ within a minute, and redrive brings it back to be projected", async () => {
    // Prepare: an oversize pointer whose object is not there yet fails on every receive (retryable).
    const dir = mkdtempSync(join(tmpdir(), "dlq-"));
    const stack = await start(dir, await freePort());
    const { sqs, s3, destroy } = emulatorClients(stack.info.endpoints);
    const body = JSON.stringify({ ...fixture("group_created"), appId: "dlq-app" });
    const eventId = createHash("sha256").update(body).digest("hex");
    const key = `oversize/dlq-app/${eventId}.json`;
    try {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: stack.info.queues.events.url,
          MessageBody: JSON.stringify({ bucket: stack.info.bucket, key, size: body.length, eventId }),
          MessageAttributes: {
            trigger: { DataType: "String", StringValue: "group_created" },
            appId: { DataType: "String", StringValue: "dlq-app" },
            receivedAt: { DataType: "Number", StringValue: String(Date.now()) },
            eventId: { DataType: "String", StringValue: eventId },
            bodyLocation: { DataType: "String", StringValue: "s3" },
          },
        }),
      );

      // Act: it is retried (5 receives, a second apart) into the DLQ.
      const started = Date.now();
      await waitForDrain(stack.info, 120);
      const seconds = (Date.now() - started) / 1000;
      await s3.send(new PutObjectCommand({ Bucket: stack.info.bucket, Key: key, Body: body }));
      const moved = await redrive(sqs, stack.info.queues.events.deadLetterUrl, stack.info.queues.events.url);
      await waitForDrain(stack.info, 30);

      // Assess
      expect(seconds).toBeLessThan(60);
      expect(moved).toBe(1);
      // The terminal shows the WARN line within 100 columns (#61); stack.log keeps it whole.
      expect(stack.output()).toMatch(/projector WARN dead-lettered after 5 failed receives/);
      await expect
        .poll(() => readFileSync(join(dir, STACK_LOG_FILE), "utf8"), { timeout: 30_000 })
        .toMatch(
          new RegExp(`projector WARN dead-lettered after 5 failed receives .*event=${eventId.slice(0, 16)}`),
        );
      expect(readStats(dir).failures.projector?.NoSuchKey).toBe(5);
      expect(readStats(dir).apps["dlq-app"]?.projector).toEqual({ failed: 5, projected: 1 });
      const dlq = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: stack.info.queues.events.deadLetterUrl,
          AttributeNames: ["ApproximateNumberOfMessages"],
        }),
      );
      expect(dlq.Attributes?.ApproximateNumberOfMessages).toBe("0");
    } finally {
      destroy();
      expect(await stop(stack)).toBe(0);
    }
  }, 300_000);
});
