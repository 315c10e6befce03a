import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { dynamoActivityStore } from "../../shared/analytics/store/dynamo-activity-store";
import { erasureRecords } from "../../shared/erasure/erasure-state";
import { projectionStores } from "../../shared/projector/stores";
import { NO_REGION_MESSAGE } from "../../tools/cli/program";
import { LOCAL_REGION } from "../../tools/local/emulators";
import {
  createActivityTable,
  createAppsTable,
  createProjectionTables,
  localTableNames,
} from "../../tools/local/provision";
import { appendLedger, writeStackInfo } from "../../tools/local/state";
import { startManagementApi } from "../../tools/simulate/management-api";
import { uniqueName } from "../support/aws";
import { queryIn, runProcess, webhookCli } from "../support/cli";
import { projectorOnEmulators } from "../support/emulator-projector";
import { simulatedHistory } from "../support/histories";
import { projectAll } from "../support/projection";

// The operator's commands against a stack's state directory whose stack.json points at the
// emulators (this worker's pid stands for the stack's): the query CLI in this process, the other
// commands in their own (`npx webhook …`), as a person runs them.

const emulators = projectorOnEmulators("operator-cli");
const APP = "cli-app-1";
const dir = mkdtempSync(join(tmpdir(), "operator-cli-"));
const history = simulatedHistory(APP, 11, 400);
const expected = history.generated.expected.get(APP);
const activityTable = uniqueName("activity");
const appsTable = uniqueName("apps");
const ROOT = new URL("../../", import.meta.url).pathname;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

beforeAll(async () => {
  const tables = localTableNames(uniqueName("cli"));
  await createProjectionTables(emulators.dynamo, tables);
  await createActivityTable(emulators.dynamo, activityTable);
  await createAppsTable(emulators.dynamo, appsTable);
  await projectAll(history.deliveries, emulators.depsFor(projectionStores(emulators.dynamo, tables)));
  const queue = { url: "", arn: "", deadLetterUrl: "" };
  writeStackInfo(dir, {
    pid: process.pid,
    webhookUrl: "http://127.0.0.1:9/webhook",
    healthUrl: "http://127.0.0.1:9/health",
    region: LOCAL_REGION,
    endpoints: { aws: inject("fauxqsEndpoint"), dynamodb: inject("dynamoEndpoint") },
    tables,
    activityTable,
    appsTable,
    bucket: emulators.bucket,
    queues: { events: queue, recordings: queue },
    credentials: { username: "u", password: "p" },
    startedAt: new Date().toISOString(),
  });
  // The counters a running stack keeps: the app has delivered.
  appendLedger(dir, ["outcome", "projector", "projected", APP, "message_sent"]);
}, 120_000);

/** The values of an item's lines whose key names a time. */
const timeValues = (out: string) =>
  out
    .split("\n")
    .map((line) => /^\s*(\S*(?:At|Time|Seen|since))\s+(.*)$/.exec(line))
    .flatMap((m) => (m ? [[m[1], m[2]] as const] : []));

describe("the query commands print every time one way: ISO 8601 UTC (#42 item 4)", () => {
  it("a user's presence: firstSeen (ms), lastActiveAt (s), lastSeen and since", async () => {
    const uid = [...(expected?.online ?? [])][0] as string;
    const { code, out } = await queryIn(dir, ["presence", uid, "--app", APP]);
    expect(code).toBe(0);
    const times = timeValues(out);
    expect(times.map(([k]) => k)).toEqual(expect.arrayContaining(["lastSeen", "since"]));
    for (const [key, value] of times) expect([key, value]).toEqual([key, expect.stringMatching(ISO)]);
  });

  it("a group and a session, nested times too, and a recording named by its time", async () => {
    const [guid] = [...(expected?.groups.keys() ?? [])];
    const group = await queryIn(dir, ["group", guid as string, "--app", APP]);
    expect(timeValues(group.out).length).toBeGreaterThan(0);
    for (const [key, value] of timeValues(group.out))
      expect([key, value]).toEqual([key, expect.stringMatching(ISO)]);
    const sessions: string[] = [];
    for (const sessionId of expected?.sessions.keys() ?? []) {
      const session = await queryIn(dir, ["session", sessionId, "--app", APP]);
      expect(session.code).toBe(0);
      sessions.push(session.out);
    }
    const text = sessions.join("\n");
    // No epoch number anywhere (seconds or ms), nested transcripts' times included; recordings by time.
    expect(text).not.toMatch(/\b1[5-9]\d{8}(\d{3})?\b/);
    expect(text).toMatch(/^recording \d{4}-\d{2}-\d{2}T\S+Z /m);
    expect(text).toMatch(/"startTime":"\d{4}-\d{2}-\d{2}T/);
  });

  it("finding nothing is one message on stderr, nothing on stdout, exit code 3", async () => {
    const { code, out, err } = await queryIn(dir, ["sessions-of", "nobody-at-all", "--app", APP]);
    expect({ code, out }).toEqual({ code: 3, out: "" });
    expect(err).toBe(`nothing found: sessions-of nobody-at-all in app ${APP}`);
  });

  it("what a query says of finding nothing (the rollup to run, where it looked) is on stderr too, stdout empty (#42, walk-4)", async () => {
    // Prepare: the app has delivered (the stack's counters) but no rollup ever ran here.
    const today = new Date().toISOString().slice(0, 10);

    // Act
    const top = await queryIn(dir, ["activity", ...TODAY_OF(APP), "--top", "users"]);
    const event = await queryIn(dir, ["event", "0123456789abcdef", "--app", APP, "--date", "today"]);

    // Assess: data (none) on stdout, every word about it on stderr, exit 3.
    expect({ code: top.code, out: top.out }).toEqual({ code: 3, out: "" });
    expect(top.err).toContain(`npx webhook rollup --app ${APP} --from ${today} --to ${today}`);
    expect(top.err).toMatch(/nothing found: activity/);
    expect({ code: event.code, out: event.out }).toEqual({ code: 3, out: "" });
    expect(event.err).toContain("in neither the archive, the quarantine nor the DLQ");
  });
});

/** An app's today, as the README writes it. */
const TODAY_OF = (app: string) => ["--app", app, "--from", "today", "--to", "today"];

describe("mistakes get help (#42 item 5)", () => {
  it("query activity for an app that never delivered says so, names the nearest known app, exit 3", async () => {
    const { code, out, err } = await queryIn(dir, ["activity", ...TODAY_OF("cli-app-9")]);
    expect({ code, out }).toEqual({ code: 3, out: "" });
    expect(err).toBe(`error: app cli-app-9 has no events (nearest known apps: ${APP})`);
    // An app that did deliver is answered as before: its days, computed or not.
    expect((await queryIn(dir, ["activity", ...TODAY_OF(APP)])).code).toBe(0);
  });

  it("rollup for an app that never delivered says so and writes nothing, exit 3", async () => {
    const run = await webhookCli(["rollup", ...TODAY_OF("cli-app-9"), "--state-dir", dir]);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr.trim()).toBe(`error: app cli-app-9 has no events (nearest known apps: ${APP})`);
    const store = dynamoActivityStore(documentClient(emulators.dynamo), activityTable);
    expect(await store.days("cli-app-9", "2000-01-01", "2100-01-01")).toEqual([]);
  }, 60_000);

  it("forget for an app that never delivered says so, names the nearest known app, exit 3; nothing is erased or recorded (#50)", async () => {
    const doc = documentClient(emulators.dynamo);
    for (const args of [["cometchat-uid-1"], ["cometchat-uid-1", "--dry-run"]]) {
      const run = await webhookCli(["forget", ...args, "--app", "cli-app-9", "--state-dir", dir]);
      expect(run.code, run.stderr).toBe(3);
      expect(run.stderr.trim()).toBe(`error: app cli-app-9 has no events (nearest known apps: ${APP})`);
    }
    expect(await erasureRecords({ doc, tableName: activityTable }, "cli-app-9")).toEqual([]);
  }, 60_000);

  it("query online, query group and listen name the nearest apps for an app that never delivered (#61)", async () => {
    // Still the one rule for nothing found (stderr, exit 3, --json prints its value), with why.
    const said = `app cli-app-9 has no events (nearest known apps: ${APP})`;
    const online = await queryIn(dir, ["online", "--app", "cli-app-9"]);
    expect({ code: online.code, out: online.out, err: online.err }).toEqual({
      code: 3,
      out: "",
      err: `nothing found: online in app cli-app-9: ${said}`,
    });
    const [guid] = [...(expected?.groups.keys() ?? [])];
    const group = await queryIn(dir, ["group", guid as string, "--app", "cli-app-9"]);
    expect({ code: group.code, err: group.err }).toEqual({
      code: 3,
      err: `nothing found: group ${guid} in app cli-app-9: ${said}`,
    });
    // An app that delivered and has nobody online is "nothing found", as before.
    expect((await queryIn(dir, ["group", "no-such-group", "--app", APP])).err).toBe(
      `nothing found: group no-such-group in app ${APP}`,
    );
    // listen may wait for an app yet to deliver: it warns, first (this stack has no stream: it stops there).
    const listen = await webhookCli(["listen", "--app", "cli-app-9", "--state-dir", dir]);
    expect(listen.stderr.split("\n")[0]).toBe(
      `warning: app cli-app-9 has no events (nearest known apps: ${APP}): listening for it anyway`,
    );
  }, 60_000);

  it("trigger refuses a --set path its template does not have, naming the nearest; forget names an unknown option; npm's own options are pointed after -- (#61)", async () => {
    const set = await webhookCli([
      "trigger",
      "group_created",
      "--set",
      "data.group.nmae=X",
      "--state-dir",
      dir,
    ]);
    expect(set.code).toBe(2);
    expect(set.stderr.trim()).toBe(
      "error: data.group.nmae is not a field of the group_created template (did you mean data.group.name?): --set changes the template's fields only (tools/simulate/templates/group_created.json)",
    );
    const forget = await webhookCli(["forget", "cometchat-uid-1", "--ap", APP, "--state-dir", dir]);
    expect(forget.code).toBe(2);
    expect(forget.stderr.trim()).toBe("error: unknown option '--ap' (did you mean --app?)");
    // `npm start --port 3005`: npm keeps --port (npm_config_port=true) and passes 3005 alone.
    const start = await webhookCli(["start", "3005"], {
      npm_lifecycle_event: "start",
      npm_lifecycle_script: "node --no-warnings --import tsx tools/commands/start.ts",
      npm_config_port: "true",
    });
    expect(start.code).toBe(2);
    expect(start.stderr.trim()).toBe(
      "error: npm took --port for itself: options go after --, as in npm start -- --port 3005",
    );
  }, 60_000);

  it("--stack without an AWS region: one line naming what to set, no stack trace (#61 item 7)", async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AWS_CONFIG_FILE: "/nonexistent",
      AWS_SHARED_CREDENTIALS_FILE: "/nonexistent",
    };
    for (const name of ["AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"]) delete env[name];
    const node = join(ROOT, "node_modules/.bin/node");
    for (const args of [
      ["query", "stats", "--stack", "some-stack"],
      ["rollup", "--from", "today", "--to", "today", "--stack", "some-stack"],
    ]) {
      const run = await runProcess(node, [join(ROOT, "bin/webhook.mjs"), ...args], { env, cwd: ROOT });
      expect(run.status).toBe(1);
      expect(run.stderr.trim().split("\n")).toEqual([`error: ${NO_REGION_MESSAGE}`]);
    }
  }, 60_000);

  it("sql names the table's columns for a column it does not know, and a write is read-only", async () => {
    const column = await webhookCli(["sql", "SELECT app_id FROM archive_events", "--state-dir", dir]);
    expect(column.code).toBe(2);
    expect(column.stderr.trim()).toBe(
      'error: no column "app_id" in archive_events (app, date, event_id, received_at, event_time, rank, trigger, natural_key, body)',
    );
    const write = await webhookCli(["sql", "DELETE FROM archive_events", "--state-dir", dir]);
    expect(write.code).toBe(2);
    expect(write.stderr.trim()).toBe(
      "error: read-only: one SELECT (or WITH, VALUES, FROM, SHOW, DESCRIBE); DELETE is not one",
    );
  }, 60_000);

  it("compact takes yesterday as rollup and query do, and answers today as a day not closed yet", async () => {
    const yesterday = await webhookCli([
      "compact",
      "--from",
      "yesterday",
      "--to",
      "yesterday",
      "--json",
      "--state-dir",
      dir,
    ]);
    expect(yesterday.code, yesterday.stderr).toBe(0);
    expect(JSON.parse(yesterday.stdout)[0].day).toBe(
      new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
    );
    const today = await webhookCli(["compact", "--from", "today", "--to", "today", "--state-dir", dir]);
    expect(today.code).toBe(1);
    expect(today.stderr.trim()).toBe("error: only closed days: --to must be before today (UTC)");
  }, 60_000);
});

describe("connect with a credential per app (#40 item 8)", () => {
  it("gives each app the credential that names it, else the one any app may use, and says so per app", async () => {
    // Prepare: the store with a pair for any app and one limited to cli-own; the simulated management API.
    const any = { username: "any-app-pair", password: "any-password-1" };
    const own = { username: "own-pair", password: "own-password-1", appIds: ["cli-own"] };
    writeFileSync(join(dir, "credentials.json"), JSON.stringify({ credentials: [any, own] }));
    const key = { key: "k", secret: "s" };
    const server = await startManagementApi({ ...key, appIds: ["cli-own", "cli-other"], allowHttp: true });
    try {
      // Act
      const run = await webhookCli(["connect", "--app", "cli-own", "cli-other", "--state-dir", dir], {
        PLATFORM_MANAGEMENT_URL: server.url,
        PLATFORM_MANAGEMENT_KEY: key.key,
        PLATFORM_MANAGEMENT_SECRET: key.secret,
      });

      // Assess
      expect(run.code, run.stderr).toBe(0);
      const username = (appId: string) => [...(server.apps.get(appId)?.webhooks.values() ?? [])][0]?.username;
      expect([username("cli-own"), username("cli-other")]).toEqual([own.username, any.username]);
      expect(run.stdout.split("\n")).toEqual(
        expect.arrayContaining([
          "cli-own: created",
          "cli-other: created",
          expect.stringMatching(/^2 apps: 2 created, 0 updated, 0 unchanged; 2 lists, 2 writes in /),
        ]),
      );
    } finally {
      await server.close();
    }
  }, 60_000);
});
