import { createServer as httpServer } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { parseWebhookEvent } from "@webhook-backend/stream/events/schemas";
import { lifecycleRank } from "@webhook-backend/stream/projections/version";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expectedActivity } from "../../tools/simulate/expected-activity";
import { deliveryPlan, generateHistory } from "../../tools/simulate/generator";
import { runSimulation, stopAppHalfway } from "../../tools/simulate/run";
import { summaryLines } from "../../tools/simulate/summary";

/** The simulator plays the platform: what it sends must be what the platform could send. */
describe("the simulator's histories", () => {
  const histories = fc.record({
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    events: fc.integer({ min: 5, max: 120 }),
  });

  it("never sends two different facts with the same bytes (a receiver could not tell them from a retry)", () => {
    fc.assert(
      fc.property(histories, ({ seed, events }) => {
        const bodies = generateHistory({ events, seed, apps: ["app"] }).events.map((e) => e.body);
        expect(new Set(bodies).size).toBe(bodies.length);
      }),
      { numRuns: 300, examples: [[{ seed: 1227024019, events: 24 }]] },
    );
  });

  it("--stop-app stops one app's deliveries half-way and sends every other app's (#52)", () => {
    fc.assert(
      fc.property(histories, ({ seed, events }) => {
        const plan = deliveryPlan(generateHistory({ events, seed, apps: ["a1", "a2"] }).events, {
          seed,
          duplicateShare: 0.05,
          reorderShare: 0.1,
        });
        const kept = stopAppHalfway(plan, "a2");
        const own = plan.filter((e) => e.appId === "a2");
        expect(kept.filter((e) => e.appId === "a1")).toEqual(plan.filter((e) => e.appId === "a1"));
        // The first half of its own deliveries, then none: what the platform sent before it stopped.
        expect(kept.filter((e) => e.appId === "a2")).toEqual(own.slice(0, Math.ceil(own.length / 2)));
      }),
      { numRuns: 50 },
    );
  });

  it("keeps each user's presence times increasing (the same ms only for a flap)", () => {
    fc.assert(
      fc.property(histories, ({ seed, events }) => {
        const last = new Map<string, number>();
        for (const e of generateHistory({ events, seed, apps: ["app"] }).events) {
          if (e.trigger !== "user_connection_status_changed") continue;
          const { user, timestamp } = (
            JSON.parse(e.body) as { data: { user: { uid: string }; timestamp: number } }
          ).data;
          expect(timestamp).toBeGreaterThanOrEqual(last.get(user.uid) ?? 0);
          last.set(user.uid, timestamp);
        }
      }),
      // 18/75: the simulator's presence times went back within a second before they were kept per user.
      { numRuns: 300, examples: [[{ seed: 18, events: 75 }]] },
    );
  });

  it("delivers facts the receipt must order in the order they were sent; swaps only what the lifecycle restores", () => {
    fc.assert(
      fc.property(histories, ({ seed, events }) => {
        const sent = generateHistory({ events, seed, apps: ["app"] }).events;
        const plan = deliveryPlan(sent, { seed, duplicateShare: 0, reorderShare: 0.3 });
        const position = new Map(plan.map((e, i) => [e, i]));
        for (let i = 0; i < sent.length; i++)
          for (let j = i + 1; j < sent.length; j++) {
            const [a, b] = [sent[i], sent[j]];
            if (!a || !b || a.item === undefined || a.item !== b.item || a.at !== b.at) continue;
            if (lifecycleRank(a.trigger) !== lifecycleRank(b.trigger)) continue;
            expect(position.get(a)).toBeLessThan(position.get(b) ?? -1);
          }
      }),
      { numRuns: 200 },
    );
  });

  it("sends edits and deletes in both layouts, the live one and the published one, every one accepted", () => {
    const { events } = generateHistory({ events: 3000, seed: 11, apps: ["app"] });
    const layouts = new Map<string, Set<string>>();
    for (const e of events.filter((x) => x.trigger === "message_edited" || x.trigger === "message_deleted")) {
      const parsed = parseWebhookEvent(JSON.parse(e.body));
      expect(parsed.kind, e.body).toBe("known");
      const message = (JSON.parse(e.body) as { data: { message: { data?: { action?: string } } } }).data
        .message;
      const seen = layouts.get(e.trigger) ?? new Set();
      seen.add(message.data?.action ? "action" : "message");
      layouts.set(e.trigger, seen);
    }
    expect([...(layouts.get("message_edited") ?? [])].sort()).toEqual(["action", "message"]);
    expect([...(layouts.get("message_deleted") ?? [])].sort()).toEqual(["action", "message"]);
  });

  it("has no phantom users: everyone active in a day's figures is one of the app's users", () => {
    // Before the fix the template's own sender (cometchat-uid-1) acted in every simulated edit
    // and delete: 31 active users in a day of 30 users.
    const history = generateHistory({ events: 3000, seed: 5, apps: ["app"] });
    const users = history.expected.get("app")?.users ?? [];
    const known = new Set(users.map((u) => u.uid));
    for (const e of history.events.filter((x) => /^message_(edited|deleted)$/.test(x.trigger)))
      expect(e.body.includes("cometchat-uid-"), e.body).toBe(false);
    for (const [, day] of expectedActivity(history.events, (e) => e.at).get("app") ?? new Map()) {
      expect(day.figures.active_users).toBeLessThanOrEqual(known.size);
      expect(day.figures.edited).toBeGreaterThan(0);
    }
  });

  it("sends the triggers beyond the spec in its mix, every one accepted and counted in its figure", () => {
    const history = generateHistory({ events: 4000, seed: 3, apps: ["app"] });
    const sent = new Set(history.events.map((e) => e.trigger));
    for (const trigger of [
      "message_delivered_to_all",
      "message_read_by_all",
      "moderation_engine_blocked",
      "moderation_engine_approved",
      "transcription_generated",
    ])
      expect(sent.has(trigger), trigger).toBe(true);
    for (const e of history.events)
      expect(parseWebhookEvent(JSON.parse(e.body)).kind, e.trigger).toBe("known");
    const days = [
      ...(expectedActivity(history.events, (e) => e.at)
        .get("app")
        ?.values() ?? []),
    ];
    const total = (name: "delivered_to_all" | "read_by_all" | "messages_blocked" | "transcripts") =>
      days.reduce((sum, d) => sum + d.figures[name], 0);
    const count = (trigger: string) => history.events.filter((e) => e.trigger === trigger).length;
    expect(total("delivered_to_all")).toBe(count("message_delivered_to_all"));
    expect(total("read_by_all")).toBe(count("message_read_by_all"));
    expect(total("messages_blocked")).toBe(count("moderation_engine_blocked"));
    expect(total("transcripts")).toBe(count("transcription_generated"));
  });
});

describe("simulate when the stack goes away mid-run", () => {
  it("returns its report (sent, acknowledged, and that the stack went away) instead of failing with the emulator's ECONNREFUSED, and exits non-zero", async () => {
    // Prepare: a webhook that acknowledges everything, and a stack whose emulators are gone (a port
    // nothing listens on: the state file of a stack that stopped).
    const webhook = httpServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200).end("{}"));
    });
    await new Promise<void>((r) => webhook.listen(0, "127.0.0.1", r));
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));
    const url = `http://127.0.0.1:${(webhook.address() as AddressInfo).port}/webhooks`;
    const stack = {
      pid: 1,
      webhookUrl: url,
      healthUrl: url,
      region: "us-east-1",
      endpoints: { aws: gone, dynamodb: gone },
      tables: { groups: "g", memberships: "m", presence: "p", sessions: "s" },
      bucket: "b",
      queues: {
        events: { url: `${gone}/000000000000/events`, arn: "a", deadLetterUrl: "d" },
        recordings: { url: `${gone}/000000000000/recordings`, arn: "a", deadLetterUrl: "d" },
      },
      credentials: { username: "u", password: "p" },
      startedAt: new Date(0).toISOString(),
    };

    // Act
    try {
      const report = await runSimulation({
        url,
        username: "u",
        password: "p",
        events: 20,
        rate: 10_000,
        concurrency: 4,
        seed: 1,
        apps: ["gone-app"],
        duplicateShare: 0,
        reorderShare: 0,
        stack,
        settleTimeoutSeconds: 5,
      });

      // Assess
      expect(report.sent).toBeGreaterThan(0);
      expect(report.byStatus).toEqual({ 200: report.sent });
      expect(report.stackGone).toMatch(/ECONNREFUSED/);
      const { lines, code } = summaryLines(report, 10_000);
      const text = lines.join("\n");
      expect(text).toContain(`sent ${report.sent} deliveries (${report.sent} acknowledged)`);
      expect(text).toMatch(/the local stack went away .*: nothing was drained or checked/);
      expect(code).not.toBe(0);
    } finally {
      await new Promise<void>((r) => webhook.close(() => r()));
    }
  });
});
