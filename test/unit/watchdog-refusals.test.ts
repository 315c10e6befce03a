import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loggedUsername, printable } from "../../shared/platform/log-safe";
import { pages, REFUSAL_ALARM, refusalBreaches } from "../../shared/watchdog/alarms";
import { judgeWebhook } from "../../shared/watchdog/platform-check";
import { contributionOf, refusalInsightRule } from "../../shared/watchdog/refusal-rule";
import { readableLine } from "../../tools/local/log-tap";
import { basic } from "../support/ingest";

/** The JSON lines a call wrote on stdout and stderr (the ingest writes its own Powertools-shaped lines). */
async function linesOf(act: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
  let text = "";
  const spies = (["stdout", "stderr"] as const).map((name) =>
    vi.spyOn(process[name], "write").mockImplementation((chunk: string | Uint8Array) => {
      text += String(chunk);
      return true;
    }),
  );
  try {
    await act();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const event = (authorization: string): APIGatewayProxyEventV2 =>
  ({
    headers: { authorization, "content-type": "application/json" },
    body: JSON.stringify({ trigger: "message_sent", appId: "app1", data: {} }),
    isBase64Encoded: false,
    requestContext: { http: { method: "POST" }, timeEpoch: Date.now() },
  }) as unknown as APIGatewayProxyEventV2;

// The ingest's real handler (its module reads its environment once, at import): no queue is
// reached, every request below is refused before the body is read.
let handler: (e: APIGatewayProxyEventV2) => Promise<{ statusCode: number }>;
const saved = { ...process.env };
beforeAll(async () => {
  Object.assign(process.env, {
    AWS_REGION: "us-east-1",
    EVENTS_QUEUE_URL: "http://127.0.0.1:9/queue/events",
    DATA_BUCKET: "unused",
    WEBHOOK_CREDENTIALS: JSON.stringify({
      credentials: [
        { username: "webhook-backend-prod", password: "right-password" },
        { username: "webhook-next", password: "next-password", replaces: "webhook-old" },
      ],
    }),
    POWERTOOLS_LOG_LEVEL: "INFO",
    POWERTOOLS_METRICS_DISABLED: "true",
  });
  ({ handler } = await import("../../functions/ingest/handler"));
});
afterAll(() => {
  process.env = saved;
});

describe("refusals per username (#58): the Contributor Insights rule on the ingest's real lines", () => {
  it("counts a known username's refusals under its logged form, and none of a scanner's guesses", async () => {
    const rule = JSON.parse(JSON.stringify(refusalInsightRule("/aws/lambda/ingest")));
    const lines = await linesOf(async () => {
      for (const auth of [
        basic("webhook-backend-prod", "changed-by-hand"),
        basic("webhook-old", "old-password"), // replaced by a rotation: known
        basic("admin", "admin"), // a scanner
        "Basic !!!", // malformed: no username
      ])
        expect((await handler(event(auth))).statusCode).toBe(401);
    });
    const counted = lines.map((l) => contributionOf(rule, l)).filter(Boolean);
    expect(counted).toEqual([loggedUsername("webhook-backend-prod"), loggedUsername("webhook-old")]);
    // No line holds a username in full, nor a password.
    const text = JSON.stringify(lines);
    for (const secret of ["webhook-backend-prod", "changed-by-hand", 'admin"', "old-password"])
      expect(text).not.toContain(secret);
  });

  it("logs a username with a newline and ANSI escapes as a prefix and a hash: no forged line on the terminal", async () => {
    const forged = "x\n12.00.00 ingest    ERROR forged line \u001b[31mred\u001b[0m"; // no colon: all of it is the username
    const lines = await linesOf(() => handler(event(basic(forged, "pw"))));
    const shown = lines.map((l) => readableLine(l as never)).join("\n");
    expect(shown.split("\n")).toHaveLength(1);
    expect(shown).not.toContain("\u001b");
    expect(shown).not.toContain("forged");
    expect(shown).toContain(`username=${loggedUsername(forged)}`);
  });

  it("the local renderer strips control characters from any field a function logs", () => {
    const line = readableLine({
      level: "WARN",
      service: "ingest",
      message: "delivery refused\nERROR forged",
      appId: "a\u001b[31m1",
      timestamp: "2026-01-02T03:04:05Z",
    });
    expect(line).not.toMatch(/\p{Cc}/u);
    expect(line).toContain("delivery refused?ERROR forged");
  });

  it("keeps a username's form short and stable, never whole", () => {
    expect(loggedUsername("webhook-backend-prod")).toMatch(/^webh:[0-9a-f]{12}$/);
    expect(loggedUsername("ab")).toMatch(/^:[0-9a-f]{12}$/);
    expect(loggedUsername("webhook-backend-prod")).not.toBe(loggedUsername("webhook-backend-pro"));
    expect(printable("a\u202eb\u0007")).toBe("a?b?");
  });

  it("pages for one known username refused in 5 minutes, whatever its share; never for unknown ones", () => {
    const quiet = { requests: 100_000, refused: [{ username: "webh:1", known: true, count: 1 }] };
    const scanner = { requests: 20, refused: [{ username: "admi:2", known: false, count: 20 }] };
    expect(refusalBreaches(quiet)).toBe(true);
    expect(refusalBreaches(scanner)).toBe(false);
    expect(pages([false, true, true, false, true], REFUSAL_ALARM)).toEqual([1, 4]);
  });
});

describe("apps --check finds triggers narrowed on the platform (#58)", () => {
  const ours = {
    webhookId: "w",
    url: "https://x/webhook",
    accepted: ["u"],
    triggers: ["message_sent", "user_connection_status_changed"],
  };
  const hook = { id: "w", webhookURL: "https://x/webhook", useBasicAuth: true, username: "u", enabled: true };
  it("reports a webhook subscribed to fewer triggers than connect set, and accepts the same set in any order", () => {
    expect(
      judgeWebhook("a", [{ ...hook, triggers: ["user_connection_status_changed"] }], ours),
    ).toMatchObject({
      state: "triggers-narrowed",
      detail: expect.stringContaining("not message_sent"),
    });
    expect(judgeWebhook("a", [{ ...hook, triggers: [...ours.triggers].reverse() }], ours).state).toBe("ok");
    // A platform that does not return the triggers cannot be judged on them.
    expect(judgeWebhook("a", [hook], ours).state).toBe("ok");
  });
});
