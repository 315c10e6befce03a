/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { mkdtempSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { blobRollupLedger } from "../../shared/analytics/store/rollup-ledger";
import { utcDay } from "../../shared/contracts/bucket-layout";
import { platformsText } from "../../tools/analytics/activity-view/days";
import { localConsoleContext } from "../../tools/console/context";
import { API_HEADER, type ConsoleServer, startConsole } from "../../tools/console/server";
import { freePort } from "../../tools/local/emulators";
import { type LocalStack, startLocalStack } from "../../tools/local/stack";
import { waitForDrain } from "../../tools/simulate/run";
import { resolveTarget, type Target } from "../../tools/target";
import { simulateActivityDay } from "../support/activity-day";
import { launchBrowser, SCREENSHOTS } from "../support/browser";
import { queryIn, spawnWebhook, webhookCli } from "../support/cli";
import { oneDayHistoryStart } from "../support/clock";
import { fixture } from "../support/fixtures";
import { postWebhook } from "../support/ingest";
import { once } from "../support/once";

// The console in a real browser (the system's headless Chromium through playwright-core) against
// a local stack in this process: what the page shows is checked against what the CLI prints.
const dir = mkdtempSync(join(tmpdir(), "console-e2e-"));
const LIVE = "console-live";
const SIM = "console-sim";
/** The live flow's own app: its three posts are its own, whatever the other tests posted. */
const FLOW = "console-flow";
let stack: LocalStack;
let target: Target;
let server: ConsoleServer;
let browser: Browser;
let page: Page;

const query = async (...args: string[]) => {
  const r = await queryIn(dir, args);
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out);
};

async function post(event: Record<string, unknown>): Promise<string> {
  const { status, eventId } = await postWebhook(stack.info, JSON.stringify(event));
  expect(status).toBe(200);
  return eventId ?? "";
}

/** A group created, a message and an invalid member change (quarantined) of `appId`, posted and drained: their ids. */
async function postThree(appId: string) {
  const invalid = fixture("group_member_scope_changed");
  invalid.appId = appId;
  delete invalid.data.members["cometchat-uid-2"].scope;
  const ids = {
    created: await post({ ...fixture("group_created"), appId }),
    message: await post({ ...fixture("message_sent"), appId }),
    invalid: await post(invalid),
  };
  await waitForDrain(stack.info, 120);
  return ids;
}

// Each test sets up what it needs (they pass in any order, issue #56); what is costly is done once,
// by the first test that needs it: LIVE's three events, and SIM's simulated history, recomputed.
const liveEvents = once(() => postThree(LIVE));
/** SIM's history around now (on one UTC day: today, or yesterday just after midnight), recomputed and checked by the simulator. */
const simulated = once(async () => {
  const history = oneDayHistoryStart(600);
  const { day, report } = await simulateActivityDay(stack.info, { app: SIM, events: 300, seed: 23, history });
  return { day, problems: report.problems ?? [] };
});

/** The text of a card (`data-card`), as a number. */
const card = async (id: string, on = page) =>
  Number(await on.locator(`[data-card="${id}"] .value`).textContent());

/**
 * Chooses `app` in the page's app picker once the picker lists it: a page loaded before the app's
 * first event does not list it (the list is the page's since its load, whatever view the tests
 * before this one left it on): reloaded until it does.
 */
async function chooseApp(on: Page, app: string) {
  await expect
    .poll(
      async () => {
        const listed = await on.locator("#app option").allTextContents();
        if (!listed.includes(app)) await on.reload();
        return listed;
      },
      { timeout: 150_000, interval: 2_000 },
    )
    .toContain(app);
  await on.selectOption("#app", app);
}

/** The rows of a table as `data-key` → { column → text }. */
const rows = (table: string) => rowsOf(page, table);

/** The rows of a table of `on` as `data-key` → { column → text }. */
async function rowsOf(on: Page, table: string): Promise<Record<string, Record<string, string>>> {
  return on
    .locator(`#${table} tbody tr[data-key]`)
    .evaluateAll((trs) =>
      Object.fromEntries(
        trs.map((tr) => [
          (tr as HTMLElement).dataset.key ?? "",
          Object.fromEntries(
            [...tr.querySelectorAll("td")].map((td) => [
              (td as HTMLElement).dataset.column ?? "",
              td.textContent ?? "",
            ]),
          ),
        ]),
      ),
    );
}

/** The day of SIM's simulated history (today, or yesterday just after midnight), and its figures as printed. */
async function simulatedDay(): Promise<{ day: string; figures: Record<string, number> }> {
  const printed = await query(
    "activity",
    "--app",
    SIM,
    "--from",
    utcDay(Date.now() - 86_400_000),
    "--to",
    utcDay(Date.now()),
    "--json",
  );
  const days = printed.days as Array<{ day: string; figures: Record<string, number> }>;
  return days.findLast((d) => (d.figures.messages ?? 0) > 0) ?? { day: "", figures: {} };
}

const shot = (view: string, on = page) =>
  on.screenshot({ path: join(SCREENSHOTS, `${view}.png`), fullPage: true });

beforeAll(async () => {
  stack = await startLocalStack({
    port: await freePort(),
    stateDir: dir,
    logMode: "silent",
    activityEveryMinutes: 0,
    retrySeconds: 1,
  });
  target = await resolveTarget({ stateDir: dir });
  server = await startConsole({ port: 0, context: localConsoleContext(target, dir) });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  target?.destroy();
  await stack?.stop();
});

describe("the console in a browser", { timeout: 300_000 }, () => {
  it("live flow: the counts follow posted events by themselves, and the counters equal `query stats`", async () => {
    // Prepare: a page of its own (a fresh page shows all apps, whatever app another test chose),
    // and its counts as they are (other tests may have posted before this one).
    const flow = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await flow.goto(`${server.url}#flow`);
      await expect.poll(() => card("accepted", flow), { timeout: 60_000 }).not.toBeNaN();
      const before = {
        accepted: await card("accepted", flow),
        quarantined: await card("quarantined", flow),
        done: (await card("projected", flow)) + (await card("archived-only", flow)),
      };

      // Act
      await postThree(FLOW);

      // Assess: no reload, the page polls.
      await expect.poll(() => card("accepted", flow), { timeout: 60_000 }).toBe(before.accepted + 3);
      await expect.poll(() => card("quarantined", flow), { timeout: 60_000 }).toBe(before.quarantined + 1);
      expect((await card("projected", flow)) + (await card("archived-only", flow))).toBe(before.done + 2);

      const stats = await query("stats", "--json");
      await expect
        .poll(async () => {
          const shown = await rowsOf(flow, "stats");
          return Object.fromEntries(Object.entries(shown).map(([k, r]) => [k, Number(r.count)]));
        })
        .toEqual({
          ...Object.fromEntries(Object.entries(stats.items).map(([k, n]) => [`items.${k}`, n])),
          ...Object.fromEntries(
            Object.entries(stats.outcomes as Record<string, Record<string, number>>).flatMap(
              ([service, counts]) => Object.entries(counts).map(([o, n]) => [`${service}.${o}`, n]),
            ),
          ),
        });
      expect(await rowsOf(flow, "queues")).toMatchObject({
        events: { depth: "0", deadLetters: "0" },
        recordings: { depth: "0", deadLetters: "0" },
      });
      await shot("live-flow", flow);
    } finally {
      await flow.close();
    }
  });

  it("recent events: newest first with their outcomes, filtered by trigger; a click tells the event's story; resend asks first", async () => {
    const ids = await liveEvents();
    await page.goto(`${server.url}#events`);
    await chooseApp(page, LIVE);
    await expect
      .poll(async () => Object.keys(await rows("events-table")).length, { timeout: 60_000 })
      .toBe(3);
    const listed = await rows("events-table");
    const events = await (async () => {
      const r = await import("../../tools/ops/recent");
      const { projectionStores } = await import("../../shared/projector/stores");
      return r.recentEvents(target.s3, stack.info.bucket, projectionStores(target.dynamo, target.tables), {
        appId: LIVE,
        limit: 25,
      });
    })();
    expect(Object.keys(listed)).toEqual(events.map((e) => e.eventId));
    expect(listed[ids.invalid ?? ""]?.outcome).toBe("quarantined");
    expect(listed[ids.created ?? ""]?.outcome).toBe("projected");

    await page.fill("#trigger", "message_sent");
    await page.dispatchEvent("#trigger", "change");
    await expect
      .poll(async () => Object.keys(await rows("events-table")), { timeout: 60_000 })
      .toEqual([ids.message]);
    await page.fill("#trigger", "");
    await page.dispatchEvent("#trigger", "change");
    await expect
      .poll(async () => Object.keys(await rows("events-table")).length, { timeout: 60_000 })
      .toBe(3);
    await shot("recent-events");

    // The story of the projected event: what `query event` says.
    const traced = await query("event", ids.created ?? "", "--json");
    await page.click(`#events-table tr[data-key="${ids.created}"]`);
    await expect
      .poll(async () => (await rows("story-fields")).outcome?.v, { timeout: 60_000 })
      .toBe("projected");
    const fields = await rows("story-fields");
    expect(fields.event?.v).toBe(traced.eventId);
    expect(fields.trigger?.v).toBe("group_created");
    const items = await page.locator("#story-items tbody tr").allTextContents();
    expect(items).toHaveLength(traced.items.length);
    expect(await page.isVisible("#resend")).toBe(false);
    await page.click("#close-story");

    // The quarantined one: its error, and resend behind a confirmation.
    await page.click(`#events-table tr[data-key="${ids.invalid}"]`);
    await expect
      .poll(async () => (await rows("story-fields")).outcome?.v, { timeout: 60_000 })
      .toBe("quarantined");
    expect((await rows("story-fields")).error?.v).toContain("scope");
    await page.click("#resend");
    expect(await page.isVisible("#confirm")).toBe(true);
    await shot("event-story");
    expect(await page.isVisible("#resend")).toBe(false);
    await page.click("#cancel-resend");
    expect(await page.isVisible("#confirm")).toBe(false);
    const quarantined = (await query("stats", "--app", LIVE, "--json")).outcomes.projector.quarantined;
    await page.waitForTimeout(300);
    expect((await query("stats", "--app", LIVE, "--json")).outcomes.projector.quarantined).toBe(quarantined);
    await page.click("#resend");
    await page.click("#confirm-resend");
    await expect.poll(() => page.textContent("#story-message"), { timeout: 60_000 }).toContain("resent");
    // Back on the queue, quarantined again (its payload is still invalid): counted twice now.
    await expect
      .poll(async () => (await query("stats", "--app", LIVE, "--json")).outcomes.projector.quarantined, {
        timeout: 60_000,
      })
      .toBe(quarantined + 1);
    await page.click("#close-story");
  });

  it("activity: the charts' days, hours and top lists hold what `query activity` prints", async () => {
    // Traffic around now, recomputed and checked against the history by the simulator itself (on
    // one UTC day: today, or yesterday when the test runs just after midnight).
    const { day, problems } = await simulated();
    expect(problems).toEqual([]);
    const from = utcDay(Date.parse(`${day}T12:00:00Z`) - 86_400_000);
    // No app chosen (a fresh page): the per-app view opens on the busiest app, not on the first
    // by name (LIVE, without figures), and offers no "All apps"; the live flow does.
    await page.goto(`${server.url}#activity`);
    await page.reload();
    await expect.poll(() => page.inputValue("#app"), { timeout: 60_000 }).toBe(SIM);
    expect(await page.locator("#app option").allTextContents()).toContain(SIM);
    expect(await page.locator("#app option").allTextContents()).not.toContain("All apps");
    expect(await page.textContent("#activity-hint")).toContain(`Showing ${SIM}, the busiest app`);
    await page.goto(`${server.url}#flow`);
    await expect.poll(() => page.locator("#app option").allTextContents()).toContain("All apps");
    await page.goto(`${server.url}#activity`);
    await chooseApp(page, SIM);
    await page.fill("#from", from);
    await page.fill("#to", day);
    await page.fill("#day", day);
    await page.dispatchEvent("#day", "change");
    const printed = await query("activity", "--app", SIM, "--from", from, "--to", day, "--json");
    const computed = printed.days as Array<{
      day: string;
      figures: Record<string, number>;
      platforms?: Record<string, number>;
      final: boolean;
    }>;
    expect(computed.length).toBeGreaterThan(0);
    // The view already shows SIM (the busiest) over the last 7 days: wait for the range set above.
    await expect
      .poll(async () => Object.keys(await rows("activity-days")), { timeout: 60_000 })
      .toEqual([from, day]);
    await expect
      .poll(
        async () =>
          Object.keys(await rows("activity-days")).filter((d) => computed.some((c) => c.day === d)).length,
        {
          timeout: 60_000,
        },
      )
      .toBe(computed.length);
    const shown = await rows("activity-days");
    for (const d of computed) {
      const row = shown[d.day];
      expect(Number(row?.messages)).toBe(d.figures.messages);
      expect(Number(row?.active_users)).toBe(d.figures.active_users);
      expect(Number(row?.peak_online)).toBe(d.figures.peak_online);
      expect(Number(row?.calls_started)).toBe(d.figures.calls_started);
      expect(Number(row?.call_minutes)).toBeCloseTo((d.figures.call_seconds ?? 0) / 60, 2);
      expect(row?.final).toBe(d.final ? "yes" : "no");
      expect(row?.platforms).toBe(platformsText(d.platforms ?? {}));
    }
    // Calls and replies per day (#33): as `query activity` prints them.
    const calls = await rows("activity-calls");
    for (const d of computed) {
      expect(Number(calls[d.day]?.calls_ended)).toBe(d.figures.calls_ended);
      expect(Number(calls[d.day]?.peak_calls)).toBe(d.figures.peak_calls);
      for (const [f, count] of [
        ["read_latency_p50_ms", "read_latencies"],
        ["delivery_latency_p90_ms", "delivery_latencies"],
        ["delivery_latency_p99_ms", "delivery_latencies"],
      ] as const)
        expect(calls[d.day]?.[f]).toBe(d.figures[count] ? String((d.figures[f] ?? 0) / 1000) : "");
    }
    // Users over time: `query activity --users`.
    /** `query activity` over the range with one view's flag, as JSON. */
    const activityPrinted = (flag: string) =>
      query("activity", "--app", SIM, "--from", from, "--to", day, flag, "--json");
    const usersPrinted = await activityPrinted("--users");
    const usersShown = await rows("activity-users");
    const usersDays = usersPrinted.days as Array<{
      day: string;
      dau: number | null;
      newUsers: number | null;
      createdUsers: number | null;
      stickiness: number | null;
      blank?: string;
    }>;
    for (const d of usersDays) {
      expect(usersShown[d.day]?.dau).toBe(d.blank ? "—" : String(d.dau));
      expect(usersShown[d.day]?.newUsers).toBe(d.blank ? "—" : String(d.newUsers));
      // #52: created users (an import shows there), and DAU / MAU of 0 / 0 is "—", never blank.
      expect(usersShown[d.day]?.createdUsers).toBe(d.createdUsers === null ? "—" : String(d.createdUsers));
      expect(usersShown[d.day]?.stickiness).toBe(
        d.blank || d.stickiness === null ? "—" : d.stickiness.toFixed(2),
      );
      // #52: a day the day table calls "(not computed)" is not a closed day with DAU 0 below it.
      if (shown[d.day]?.messages === "(not computed)") expect(usersShown[d.day]?.dau).toBe("—");
    }
    // The history's day is not closed (today; or yesterday, in the first minutes after midnight,
    // before its grace period ends): "—", never 0, and a note that says when it closes (UTC) and
    // what to run (#42).
    expect(usersDays.find((d) => d.day === day)?.blank).toBe("not closed");
    expect(usersShown[day]).toMatchObject({ dau: "—", wau: "—", mau: "—", newUsers: "—" });
    const notes = await page.locator("#activity-users-note div").allTextContents();
    const closes = `${utcDay(Date.parse(`${day}T12:00:00Z`) + 86_400_000)}T02:00:00Z`;
    expect(notes.find((n) => n.includes(`${day}: not closed yet: closes at ${closes}`))).toContain(
      day === utcDay(Date.now())
        ? `npx webhook query activity --app ${SIM} --from ${day} --to ${day}`
        : `npx webhook rollup --from ${day} --to ${day} --grace-minutes 0`,
    );
    expect(notes).toEqual(
      (usersPrinted.blank as Array<{ text: string; run?: string }>).map(
        (b) => `— ${b.text}${b.run ? ` ${b.run}` : ""}`,
      ),
    );
    // The weekly cohorts: `query activity --retention`'s weeks.
    const cohortsShown = await rows("activity-cohorts");
    const weeks = usersPrinted.weeks as Array<{ week: string; users: number; active: Array<number | null> }>;
    expect(Object.keys(cohortsShown)).toEqual(weeks.map((w) => w.week));
    for (const w of weeks) {
      expect(cohortsShown[w.week]?.users).toBe(w.users === null ? "—" : String(w.users));
      expect(cohortsShown[w.week]?.w1).toBe(
        w.active[0] === null || w.users === null
          ? "—"
          : !w.users
            ? ""
            : ((w.active[0] ?? 0) / w.users).toFixed(2),
      );
    }
    // Groups and members: `query activity --groups`.
    const groupsPrinted = await activityPrinted("--groups");
    const groupsShown = await rows("activity-groups");
    const groupDays = groupsPrinted.days as Array<{
      day: string;
      membersAtEnd: number | null;
      churn: number | null;
      blank?: string;
    }>;
    expect(groupDays.map((d) => d.day)).toEqual([from, day]);
    for (const d of groupDays) {
      expect(groupsShown[d.day]?.membersAtEnd).toBe(d.blank ? "—" : String(d.membersAtEnd));
      expect(groupsShown[d.day]?.churn).toBe(d.blank ? "—" : d.churn === null ? "" : d.churn.toFixed(3));
    }
    // The heatmaps: `query activity --heatmap`.
    const heat = await query("activity", "--app", SIM, "--from", from, "--to", day, "--heatmap", "--json");
    for (const [table, grid] of [
      ["heatmap-online", heat.peakOnline],
      ["heatmap-calls", heat.peakCalls],
    ] as const) {
      const shownGrid = await rows(table);
      expect(Object.keys(shownGrid)).toEqual(Object.keys(grid));
      // An hour not begun when today was computed is null there and blank here.
      for (const [weekday, values] of Object.entries(grid as Record<string, Array<number | null>>))
        expect(
          values.map((_, h) => {
            const cell = shownGrid[weekday]?.[String(h).padStart(2, "0")];
            return cell === "" ? null : Number(cell);
          }),
        ).toEqual(values);
    }
    // #52: each hour's header over its column, in both heatmaps, and the two tables' hours over
    // each other (one fixed grid).
    const edges = (table: string) =>
      page.evaluate((id) => {
        const left = (cells: Iterable<Element>) =>
          [...cells].map((c) => Math.round(c.getBoundingClientRect().left));
        const t = document.getElementById(id) as HTMLTableElement;
        return {
          head: left(t.querySelectorAll("thead th")),
          rows: [...t.querySelectorAll("tbody tr")].map((r) => left(r.querySelectorAll("td"))),
        };
      }, table);
    const online = await edges("heatmap-online");
    const callsGrid = await edges("heatmap-calls");
    expect(online.head).toHaveLength(25);
    for (const grid of [online, callsGrid]) for (const row of grid.rows) expect(row).toEqual(grid.head);
    expect(callsGrid.head).toEqual(online.head);
    const messagesChart = await page.evaluate(() => {
      const c = (
        window as unknown as {
          Chart: {
            getChart(id: string): { data: { labels: string[]; datasets: Array<{ data: number[] }> } };
          };
        }
      ).Chart.getChart("chart-messages");
      return { labels: c.data.labels, messages: c.data.datasets[0]?.data };
    });
    // Every day of the range, oldest first; a day not computed is a gap.
    const range = [from, day];
    expect(messagesChart).toEqual({
      labels: range,
      messages: range.map((d) => computed.find((c) => c.day === d)?.figures.messages ?? null),
    });
    expect(Object.keys(shown)).toEqual(range);

    const hours = (
      await query("activity", "--app", SIM, "--from", day, "--to", day, "--hourly", "--json")
    )[0];
    const hoursChart = await page.evaluate(() => {
      const c = (
        window as unknown as {
          Chart: { getChart(id: string): { data: { datasets: Array<{ data: number[] }> } } };
        }
      ).Chart.getChart("chart-hours");
      return c.data.datasets[0]?.data;
    });
    // An hour not begun when the day was computed (today's later hours) is a gap (#42, walk-2).
    const expectedHours = Array.from(
      { length: 24 },
      (_, h) => (hours?.hours ?? []).find((x: { hour: number }) => x.hour === h)?.figures.messages ?? null,
    );
    expect(hoursChart).toEqual(expectedHours);
    // #52: active users, peak online and calls started on a second axis (right), the messages on the left.
    const axes = await page.evaluate(() => {
      const c = (
        window as unknown as {
          Chart: {
            getChart(id: string): {
              data: { datasets: Array<{ label: string; yAxisID?: string }> };
              scales: Record<string, { position: string; max: number }>;
            };
          };
        }
      ).Chart.getChart("chart-hours");
      return {
        axes: c.data.datasets.map((d) => d.yAxisID ?? "y"),
        positions: Object.fromEntries(Object.entries(c.scales).map(([id, s]) => [id, s.position])),
      };
    });
    expect(axes.axes).toEqual(["y", "people", "people", "people"]);
    expect(axes.positions).toMatchObject({ y: "left", people: "right" });

    const top = (
      await query("activity", "--app", SIM, "--from", day, "--to", day, "--top", "users", "--json")
    )[0];
    const users = await rows("top-users");
    expect(Object.keys(users)).toEqual(top.users.map((u: { uid: string }) => u.uid));
    for (const u of top.users) expect(Number(users[u.uid]?.messages)).toBe(u.messages);
    const groups = (
      await query("activity", "--app", SIM, "--from", day, "--to", day, "--top", "groups", "--json")
    )[0];
    expect(groups.groups.length).toBeGreaterThan(0);
    const groupRows = await rows("top-groups");
    expect(Object.keys(groupRows)).toEqual(groups.groups.map((g: { groupId: string }) => g.groupId));
    for (const g of groups.groups) {
      expect(Number(groupRows[g.groupId]?.messages)).toBe(g.messages);
      expect(Number(groupRows[g.groupId]?.activeMembers)).toBe(g.activeMembers);
    }
    await shot("activity");
  });

  it("calls: the duration buckets are of calls and meetings and add up to both ended; participants are per call ended, of all (#42 item 7)", async () => {
    // Prepare: SIM's history, and the page on its day.
    await simulated();
    const { day, figures } = await simulatedDay();
    expect(figures.sessions_ended).toBeGreaterThan(0);
    await page.goto(`${server.url}#activity`);
    await chooseApp(page, SIM);
    await page.fill("#day", day);
    await page.dispatchEvent("#day", "change");
    await expect
      .poll(async () => Object.keys(await rows("activity-calls")), { timeout: 60_000 })
      .toContain(day);
    const header = await page.locator("#activity-calls thead th").allTextContents();
    expect(header).toContain("calls + meetings ended");
    expect(header).toContain("calls + meetings by duration: < 1 / 1–5 / 5–15 / 15–60 / ≥ 60 min");
    expect(header).toContain("participants per call ended (of all calls ended)");
    const row = (await rows("activity-calls"))[day];
    expect(Number(row?.sessions_ended)).toBe(figures.sessions_ended);
    expect(Number(row?.calls_ended) + Number(row?.meetings_ended)).toBe(figures.sessions_ended);
    const buckets = (row?.durations ?? "").split(" / ").map(Number);
    expect(buckets.reduce((a, b) => a + b, 0)).toBe(figures.sessions_ended);
    expect(await page.textContent("#activity-calls-note")).toContain("nobody on its roster");
  });

  it("an event's story closes with a change of view; every time is UTC ISO, the header's too (#42 item 8)", async () => {
    const ids = await liveEvents();
    await page.goto(`${server.url}#events`);
    await chooseApp(page, LIVE);
    await page.click(`#events-table tr[data-key="${ids.created}"]`);
    await expect
      .poll(() => page.evaluate(() => (document.getElementById("story") as HTMLDialogElement).open))
      .toBe(true);

    // Back or a link to another view (the dialog is modal: the address, history or keyboard).
    await page.evaluate(() => {
      location.hash = "#activity";
    });

    await expect.poll(() => page.evaluate(() => document.body.dataset.view)).toBe("activity");
    expect(await page.evaluate(() => (document.getElementById("story") as HTMLDialogElement).open)).toBe(
      false,
    );
    await expect
      .poll(() => page.textContent("#updated"))
      .toMatch(/^updated \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it("just after midnight UTC, the Day picker offers yesterday while today has nothing yet (#42 item 8)", async () => {
    // Prepare: the page's clock five minutes into the day after the simulated one (the stack's is real).
    await simulated();
    const { day } = await simulatedDay();
    const next = utcDay(Date.parse(`${day}T12:00:00Z`) + 86_400_000);
    const late = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await late.clock.setFixedTime(new Date(`${next}T00:05:00Z`));

    // Act
    await late.goto(`${server.url}#activity`);
    await chooseApp(late, SIM);

    // Assess: yesterday's day, said so; the header's time is the page's clock, in UTC.
    await expect.poll(() => late.inputValue("#day"), { timeout: 60_000 }).toBe(day);
    expect(await late.textContent("#day-hint")).toBe(
      `Today (${next}) has nothing yet: showing yesterday; choose another day.`,
    );
    await expect.poll(() => late.textContent("#updated")).toBe(`updated ${next}T00:05:00Z`);
    // A day chosen stays chosen.
    await late.fill("#day", next);
    await late.dispatchEvent("#day", "change");
    await expect.poll(() => late.textContent("#day-hint")).toBe("");
    expect(await late.inputValue("#day")).toBe(next);
    await late.close();
  });

  it("days are ISO UTC, typed as such in any browser locale, a day at a time by ◀ ▶; a day not computed says the rollup to run, as the CLI does (#42, walk-4)", async () => {
    // Prepare: a US-English browser, whose date inputs read 11/26/2026; a range long before the history.
    await simulated();
    const us = await browser.newPage({ locale: "en-US", viewport: { width: 1280, height: 900 } });
    await us.goto(`${server.url}#activity`);
    await chooseApp(us, SIM);
    await expect.poll(() => us.inputValue("#to"), { timeout: 60_000 }).toBe(utcDay(Date.now()));

    // Act: each day typed key by key, as a person types it.
    for (const [id, value] of [
      ["#from", "2020-01-01"],
      ["#to", "2020-01-02"],
    ] as const) {
      await us.fill(id, "");
      await us.locator(id).pressSequentially(value);
      await us.locator(id).press("Tab");
    }

    // Assess: both days, not computed, and under them the rollup `query activity` prints.
    await expect
      .poll(async () => Object.keys(await rowsOf(us, "activity-days")), { timeout: 60_000 })
      .toEqual(["2020-01-01", "2020-01-02"]);
    expect((await rowsOf(us, "activity-days"))["2020-01-01"]?.messages).toBe("(not computed)");
    const printed = await queryIn(dir, [
      "activity",
      "--app",
      SIM,
      "--from",
      "2020-01-01",
      "--to",
      "2020-01-02",
    ]);
    const run = printed.out
      .split("\n")
      .find((l) => l.trim().startsWith("npx webhook rollup"))
      ?.trim();
    expect(run).toContain(`npx webhook rollup --app ${SIM} --from 2020-01-01 --to 2020-01-02`);
    expect(await us.locator("#activity-days-note div").allTextContents()).toEqual([
      `— 2020-01-01 … 2020-01-02: not computed yet; the rollup computes them: ${run}`,
    ]);

    // The Day picker: typed, then a day after and two before, in UTC.
    await us.fill("#day", "");
    await us.locator("#day").pressSequentially("2020-03-01");
    await us.locator("#day").press("Tab");
    await us.click("#day-after");
    expect(await us.inputValue("#day")).toBe("2020-03-02");
    await us.click("#day-before");
    await us.click("#day-before");
    expect(await us.inputValue("#day")).toBe("2020-02-29");
    // Its top lists, not computed, say the rollup to run for that day, as the CLI's note does.
    await expect
      .poll(() => us.textContent("#top-users"), { timeout: 60_000 })
      .toContain(`the rollup computes it: npx webhook rollup --app ${SIM} --from 2020-02-29 --to 2020-02-29`);
    // The browser's own form of a day is not one: marked, and nothing asked with it.
    await us.fill("#day", "03/01/2020");
    await us.locator("#day").press("Tab");
    expect(await us.evaluate(() => (document.getElementById("day") as HTMLInputElement).validity.valid)).toBe(
      false,
    );
    expect(await us.textContent("#updated")).not.toMatch(/error/);
    await us.close();
  });

  it("now: users online, sessions in progress and recordings, as the queries print them", async () => {
    await simulated();
    await page.goto(`${server.url}#now`);
    await chooseApp(page, SIM);
    const online = await query("online", "--app", SIM, "--json");
    // `query recordings` exits 3 when the app has none (the seed's history may hold none).
    const listed = await queryIn(dir, ["recordings", "--app", SIM, "--json"]);
    expect([0, 3], listed.err).toContain(listed.code);
    const recordings = listed.code === 0 ? JSON.parse(listed.out) : [];
    expect(online.length).toBeGreaterThan(0);
    await expect.poll(() => card("online"), { timeout: 60_000 }).toBe(online.length);
    expect(Object.keys(await rows("online")).sort()).toEqual(
      online.map((p: { uid: string }) => p.uid).sort(),
    );
    const archived = recordings.filter((r: { status: string }) => r.status === "archived").length;
    expect(await card("recordings-archived")).toBe(archived);
    expect(await card("recordings-failed")).toBe(
      recordings.filter((r: { status: string }) => r.status === "failed").length,
    );
    const now = Date.now();
    const sessions = await query(
      "sessions",
      "--app",
      SIM,
      "--from",
      new Date(now - 86_400_000).toISOString(),
      "--to",
      new Date(now).toISOString(),
      "--json",
    );
    const inProgress = sessions.filter(
      (s: { endedAt?: number; outcome?: string }) =>
        s.endedAt === undefined && (s.outcome ?? "initiated") === "initiated",
    );
    expect(await card("in-progress")).toBe(inProgress.length);
    await shot("now");
  });
});

describe("the watchdog in the console (#52)", () => {
  it("shows a silent app under the header, since when and for how long, as `apps --silent` lists it", async () => {
    // Prepare: a week of passes in which console-silent sent 120 deliveries an hour, last seen 3 h ago
    const ledger = blobRollupLedger(s3BlobStore(target.s3, target.bucket ?? ""));
    const app = "console-silent";
    const lastSeenAt = Date.now() - 3 * 3_600_000;
    for (let d = 0; d <= 7; d++) {
      const day = utcDay(Date.now() - d * 86_400_000);
      const pass = (await ledger.pass(day)) ?? {
        ...{ day, computedAt: Date.now(), final: d > 1, queries: 0, bytesScanned: 0, apps: {} },
      };
      await ledger.record({
        ...pass,
        hourly: { ...pass.hourly, [app]: Array(24).fill(d === 0 ? 0 : 120) },
        seenAt: { ...pass.seenAt, [app]: lastSeenAt },
      });
    }
    const listed = await webhookCli(["apps", "--silent", "--json", "--state-dir", dir]);
    // A finding exits 1, with or without --json (#58).
    expect(listed.code, listed.stderr).toBe(1);
    const silent = JSON.parse(listed.stdout).silent as Array<{ appId: string; lastSeenAt: number }>;
    expect(silent.map((s) => s.appId)).toContain(app);

    // Act: a console of its own (the page's overview reads the ledger at most once a minute)
    const own = await startConsole({ port: 0, context: localConsoleContext(target, dir) });
    const on = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await on.goto(`${own.url}#events`);

      // Assess
      const banner = on.locator("#silent");
      await expect.poll(() => banner.textContent(), { timeout: 60_000 }).toContain(app);
      expect(await banner.textContent()).toContain(
        `${app} (no delivery for 3 h 00 min, since ${new Date(lastSeenAt).toISOString().slice(0, 19)}Z)`,
      );
    } finally {
      await on.close();
      await own.close();
    }
  });
});

describe("the console is for this machine only", () => {
  /** A raw request with the headers a browser on another site, or a rebound name, would send. */
  const raw = (method: string, path: string, headers: Record<string, string>, withHeader = true) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const all = withHeader ? { [API_HEADER]: "1", ...headers } : headers;
      const req = httpRequest({ host: "127.0.0.1", port: server.port, method, path, headers: all }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });

  it("`npx webhook console` serves the local stack's console until Ctrl-C; another host is a usage error", async () => {
    const run = spawnWebhook(["console", "--state-dir", dir, "--port", "0"]);
    for (let i = 0; i < 200 && !/on http:\S+/.test(run.written.stdout); i++)
      await new Promise((r) => setTimeout(r, 100));
    const url = /on (http:\S+)/.exec(run.written.stdout)?.[1];
    expect(url, run.written.stderr).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const overview = (await (
      await fetch(`${url}api/overview?app=${LIVE}`, { headers: { [API_HEADER]: "1" } })
    ).json()) as {
      stats: { outcomes: Record<string, Record<string, number>> };
    };
    expect(overview.stats.outcomes).toEqual((await query("stats", "--app", LIVE, "--json")).outcomes);
    run.child.kill("SIGINT");
    expect(await run.exit).toBe(0);
    // (`events` of an app with nothing: "nothing found", exit 3, as every query.)
    const none = await webhookCli(["events", "--app", "no-such-app", "--state-dir", dir]);
    expect([none.code, none.stderr.trim()]).toEqual([3, "nothing found: no events of app no-such-app"]);
    const refused = await webhookCli(["console", "--state-dir", dir, "--host", "0.0.0.0"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("loopback only");
  });

  it("refuses to listen on anything but loopback", async () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "example.com"])
      await expect(
        startConsole({ host, port: 0, context: localConsoleContext(target, dir) }),
      ).rejects.toThrow(/loopback only/);
  });

  it("answers only its own Host and Origin; a write needs its Origin and a JSON body", async () => {
    const own = `127.0.0.1:${server.port}`;
    expect((await raw("GET", "/api/overview", { host: own })).status).toBe(200);
    expect((await raw("GET", "/api/overview", { host: `localhost:${server.port}` })).status).toBe(200);
    const rebound = await raw("GET", "/api/overview", { host: `attacker.example:${server.port}` });
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body).error).toContain("attacker.example");
    expect((await raw("GET", "/", { host: `attacker.example:${server.port}` })).status).toBe(421);
    // Another site's image or link: a GET without Origin, and without the console's header.
    const image = await raw("GET", "/api/events", { host: own }, false);
    expect(image.status).toBe(403);
    expect(JSON.parse(image.body).error).toContain(API_HEADER);
    expect((await raw("HEAD", "/", { host: own }, false)).status).toBe(200);
    const crossSite = await raw("GET", "/api/events", { host: own, origin: "https://attacker.example" });
    expect(crossSite.status).toBe(403);
    const path = `/api/events/${(await liveEvents()).invalid}/resend`;
    expect((await raw("POST", path, { host: own })).status).toBe(403);
    expect(
      (await raw("POST", path, { host: own, origin: `http://${own}`, "content-type": "text/plain" })).status,
    ).toBe(415);
    expect(
      (
        await raw("DELETE", "/api/events", {
          host: own,
          origin: `http://${own}`,
          "content-type": "application/json",
        })
      ).status,
    ).toBe(405);
  });

  it("a bad parameter is a 400 naming it", async () => {
    const own = `127.0.0.1:${server.port}`;
    const bad = await raw("GET", "/api/activity?app=a&from=2026-13-01&to=2026-01-02", { host: own });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error).toMatch(/^from: /);
    const id = await raw("GET", "/api/events/xyz", { host: own });
    expect(id.status).toBe(400);
    expect(JSON.parse(id.body).error).toContain("hex");
  });
});
