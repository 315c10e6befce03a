import { describe, expect, it } from "vitest";
import { duration } from "../../shared/watchdog/log-fields";
import type { SilenceReport } from "../../shared/watchdog/silence";
import { checkSummary, findingLines, silenceLines } from "../../tools/cli/watchdog-output";

const AT = Date.UTC(2026, 0, 2, 12);
const MIN = 60_000;

describe("the watchdog's lines (#52)", () => {
  it("apps --silent: which apps, since when, for how long, and what to run next", () => {
    const report: SilenceReport = {
      at: AT,
      judged: 40,
      learning: 2,
      silent: [{ appId: "app-7", lastSeenAt: AT - 125 * MIN, silentForMs: 125 * MIN, expected: 212.5 }],
    };
    const lines = silenceLines(report, "prod");
    expect(lines[2]).toBe("app-7  2026-01-02T09:55:00Z  2 h 05 min  212.5 deliveries");
    expect(lines.at(-1)).toBe(
      "1 app silent of 40 apps judged, 2 still learning (first delivery today or yesterday): their webhooks on the platform side: npx webhook apps --check --stack prod",
    );
    expect(silenceLines({ ...report, silent: [], learning: 0 }, undefined)).toEqual([
      "no app is silent (40 apps judged, 2026-01-02T12:00:00Z)",
    ]);
  });

  it("apps --check: a finding names what to run and what was lost; a right webhook prints nothing", () => {
    const lines = findingLines(
      { appId: "app-3", state: "disabled", detail: "webhook webhook-backend-prod is disabled" },
      { stack: "prod", lastSeenAt: AT - 3 * 60 * MIN },
    );
    expect(lines).toEqual([
      "app-3: its webhook is disabled: webhook webhook-backend-prod is disabled",
      "  run: npx webhook connect --app app-3 --stack prod (re-creates, re-enables, repoints it with an accepted credential), then npx webhook reconcile --app app-3 --region <us|eu|in> --stack prod (presence and users)",
      "  lost: every delivery since 2026-01-02T09:00:00Z (its last delivery seen): the platform retries for ~40 s only; messages, calls and group events of that window cannot be recovered from this side",
    ]);
    expect(findingLines({ appId: "a", state: "ok", detail: "" }, { stack: undefined })).toEqual([]);
    expect(
      checkSummary(
        {
          ok: 996,
          missing: 1,
          disabled: 1,
          "points-elsewhere": 1,
          "no-basic-auth": 0,
          "username-refused": 1,
          "triggers-narrowed": 0,
          unchecked: 0,
        },
        12.34,
      ),
    ).toBe(
      "1,000 apps checked: 996 ok, 1 missing, 1 disabled, 1 points-elsewhere, 1 username-refused in 12.3 s",
    );
  });

  it("durations read as a person says them", () => {
    expect([duration(45 * MIN), duration(185 * MIN), duration(50 * 60 * MIN)]).toEqual([
      "45 min",
      "3 h 05 min",
      "2 d 2 h",
    ]);
  });
});
