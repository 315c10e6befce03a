import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { deliveryEnvelope } from "../../shared/stream/envelope";
import { forwardedLine } from "../../tools/ops/listen";
import { nobodySubscribedLines, streamReplayLines } from "../../tools/ops/stream";

// What the stream's commands print: listen --forward-to's line per message, replay
// --to-stream's report and warning.

describe("listen --forward-to's line per message (#42, walk)", () => {
  const url = "http://127.0.0.1:4000/hooks";
  const body = '{"trigger":"group_created","appId":"app1"}';
  const eventId = createHash("sha256").update(body).digest("hex");
  const receivedAt = Date.UTC(2026, 10, 25, 23, 59, 59, 900);
  const delivery = deliveryEnvelope({ eventId, receivedAt, trigger: "group_created", appId: "app1", body });

  const listener = { queueName: "webhook-listen-3f2a9c1b" };

  it("says when the endpoint took a message only after a retry, as the failure says its attempts", () => {
    expect(forwardedLine(url, { status: 200, attempts: 1, ok: true }, delivery, listener)).toBe(
      `  → POST ${url} [200]`,
    );
    expect(forwardedLine(url, { status: 200, attempts: 2, ok: true }, delivery, listener)).toBe(
      `  → POST ${url} [200] at attempt 2 (retried)`,
    );
  });

  it("names a delivery it dropped and gives the replay of that one delivery to this listener alone (#51 item 5: it gave the app-day to every subscriber)", () => {
    expect(forwardedLine(url, { status: 0, attempts: 5, ok: false }, delivery, listener).split("\n")).toEqual(
      [
        `  → POST ${url} failed after 5 attempts [no answer]: dropped ${eventId.slice(0, 16)}@${receivedAt}`,
        `    to send it to this listener again: npx webhook replay --to-subscriber webhook-listen-3f2a9c1b --delivery ${eventId.slice(0, 16)}@${receivedAt}`,
      ],
    );
    const deployed = { ...listener, stack: "prod" };
    expect(forwardedLine(url, { status: 400, attempts: 1, ok: false }, delivery, deployed)).toContain(
      "failed after 1 attempt [400]",
    );
    expect(forwardedLine(url, { status: 400, attempts: 1, ok: false }, delivery, deployed)).toMatch(
      / --stack prod$/,
    );
  });

  it("names an erasure notice it dropped, which no replay sends again", () => {
    const notice = {
      schemaVersion: 1,
      kind: "erasure",
      id: "5ecdb04e580aef21",
      appId: "app1",
      scope: "user",
      finishedAt: receivedAt,
    } as const;
    const line = forwardedLine(url, { status: 503, attempts: 5, ok: false }, notice, listener);
    expect(line).toContain("dropped the erasure notice 5ecdb04e580aef21 (app app1)");
    expect(line).not.toContain("replay --to-stream");
  });
});

describe("replay --to-stream's report and warning (#41, walk-5)", () => {
  const report = {
    objects: 16,
    deliveries: 6,
    duplicates: 1,
    refused: 0,
    failed: [],
    requests: 1,
    chunks: 1,
  };

  it("says what it published, what that billed and what it skipped, each line within 100 columns", () => {
    const lines = streamReplayLines(report);
    expect(lines).toEqual([
      "published 6 deliveries from 16 archive objects to the stream",
      "  in 1 request (1 billed 64 KiB chunk)",
      "  skipped: 1 duplicate line, 0 refused (quarantined) deliveries",
    ]);
    expect(streamReplayLines({ ...report, dryRun: true, failed: ["x@1"] })[0]).toBe(
      "would publish 5 deliveries from 16 archive objects to the stream",
    );
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
  });

  it("to one subscriber, says it went to that queue only and what its filter policy kept from it (#51 item 3)", () => {
    const lines = streamReplayLines({ ...report, filtered: 9, dryRun: true }, "crm-sync");
    expect(lines[0]).toBe(
      "would send 6 deliveries from 16 archive objects to subscriber crm-sync's queue only",
    );
    expect(lines.at(-1)).toBe("  not for it: 9 deliveries its filter policy keeps from it");
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
  });

  it("warns a dry run too that nothing is subscribed, in the future tense", () => {
    const arn = "arn:aws:sns:us-east-1:000000000000:stream";
    expect(nobodySubscribedLines(arn, true)).toEqual([
      `warning: nothing is subscribed to ${arn}`,
      "  published now, they would reach no one: start `npx webhook listen` or declare streamSubscribers",
    ]);
    expect(nobodySubscribedLines(arn, false)[1]).toMatch(/^ {2}they reached no one: .*then run it again$/);
    for (const line of nobodySubscribedLines(arn, true)) expect(line.length).toBeLessThanOrEqual(100);
  });
});
