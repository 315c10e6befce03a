import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PurgeQueueCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import type { SessionState } from "@webhook-backend/stream/projections/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveLease, COMMAND_LEASE_WAIT } from "../../shared/adapters/archive-lease";
import { documentClient, dynamoItemStore } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { SESSIONS_TABLE } from "../../shared/platform/tables";
import { projectionStores } from "../../shared/projector/stores";
import { archiveRecording } from "../../shared/recorder/archive";
import { systemResolver } from "../../shared/recorder/safe-fetch";
import { credentialsFilePath } from "../../tools/local/credentials-store";
import { freePort } from "../../tools/local/emulators";
import { createProjectionTables, localTableNames } from "../../tools/local/provision";
import { type LocalStack, startLocalStack } from "../../tools/local/stack";
import { readStats } from "../../tools/local/state";
import { redrive, replayArchive } from "../../tools/ops/operations";
import { analyticsQueries } from "../../tools/query/queries";
import { checkTables } from "../../tools/simulate/check";
import { simulatedApiKey, startPlatformApi } from "../../tools/simulate/platform-api";
import { runSimulation, type SimulationReport, waitForDrain } from "../../tools/simulate/run";
import { queryIn, webhookCli } from "../support/cli";
import { fixture } from "../support/fixtures";
import { postWebhook } from "../support/ingest";

const dir = mkdtempSync(join(tmpdir(), "local-stack-"));
let stack: LocalStack;
let report: SimulationReport;
/** `simulatedItems` of the live tables once the simulation was checked. */
let simulated: Record<string, unknown>;
const APPS = ["e2e-a", "e2e-b"];

const ROOT = new URL("../../", import.meta.url).pathname;

const cli = (args: string[]) => webhookCli(args);
const query = (args: string[]) => queryIn(dir, args);

beforeAll(async () => {
  stack = await startLocalStack({ port: await freePort(), stateDir: dir, inMemory: true, logMode: "silent" });
  report = await runSimulation({
    url: stack.info.webhookUrl,
    username: stack.info.credentials.username,
    password: stack.info.credentials.password,
    events: 800,
    rate: 2000,
    concurrency: 8,
    seed: 5,
    apps: APPS,
    duplicateShare: 0.05,
    reorderShare: 0.1,
    stack: stack.info,
    settleTimeoutSeconds: 120,
  });
  simulated = await simulatedItems(stack.info.tables);
}, 300_000);

afterAll(async () => {
  await stack?.stop();
});

/** The items the simulation's apps hold in `tables`: each group and its members, who is online, each session. */
async function simulatedItems(tables: typeof stack.info.tables) {
  const q = analyticsQueries(documentClient(stack.clients.dynamo), tables);
  const items: Record<string, unknown> = {};
  for (const [app, expected] of report.history.expected) {
    for (const guid of expected.groups.keys()) {
      items[`${app} group ${guid}`] = await q.group(app, guid);
      items[`${app} members ${guid}`] = await q.members(app, guid, { includeFormer: true });
    }
    items[`${app} online`] = await q.online(app);
    for (const sessionId of expected.sessions.keys())
      items[`${app} session ${sessionId}`] = await q.session(app, sessionId);
  }
  return items;
}

describe("the local stack end to end", () => {
  it("answers /health once ready", async () => {
    expect((await fetch(stack.info.healthUrl)).status).toBe(200);
  });

  it("accepts every delivery of a simulated history with duplicates and reordering, and the tables match it", () => {
    expect(report.byStatus).toEqual({ 200: report.sent });
    expect(report.sent).toBeGreaterThan(800);
    expect(report.problems).toEqual([]);
  });

  it("archived the history's recordings byte-identical (checked by SHA-256 against the source)", () => {
    const recordings = report.history.events.filter((e) => e.recording);
    expect(recordings.length).toBeGreaterThan(0);
    // checkTables compared each archived recording's size and SHA-256 with the served file.
    expect(report.problems).toEqual([]);
  });

  it("answers the query CLI in JSON with what the history implies", async () => {
    const [app, expected] = [...report.history.expected][0] ?? [];
    if (!app || !expected) throw new Error("no app");
    const [guid, group] = [...expected.groups].find(([, g]) => !g.deleted) ?? [];
    if (!guid || !group) throw new Error("no live group");
    const g = await query(["group", guid, "--app", app, "--json"]);
    expect(g.code).toBe(0);
    expect(JSON.parse(g.out)).toMatchObject({ guid, name: group.name, owner: group.owner, deleted: false });
    const m = await query(["members", guid, "--app", app, "--json"]);
    expect(new Map(JSON.parse(m.out).map((x: { uid: string; scope: string }) => [x.uid, x.scope]))).toEqual(
      group.members,
    );
    const [member] = [...group.members.keys()];
    const groups = JSON.parse((await query(["groups-of", member ?? "", "--app", app, "--json"])).out);
    expect(groups.map((x: { guid: string }) => x.guid)).toContain(guid);
    const online = JSON.parse((await query(["online", "--app", app, "--json"])).out);
    expect(new Set(online.map((p: { uid: string }) => p.uid))).toEqual(expected.online);
    const [uid] = [...expected.online];
    if (uid)
      expect(JSON.parse((await query(["presence", uid, "--app", app, "--json"])).out)).toMatchObject({
        uid,
        status: "online",
      });
    const sessions = JSON.parse(
      (await query(["sessions", "--app", app, "--from", "0", "--to", "2100-01-01T00:00:00Z", "--json"])).out,
    );
    expect(new Set(sessions.map((s: { sessionId: string }) => s.sessionId))).toEqual(
      new Set(expected.sessions.keys()),
    );
    const [sessionId] = [...expected.sessions.keys()];
    expect(JSON.parse((await query(["session", sessionId ?? "", "--app", app, "--json"])).out)).toMatchObject(
      { sessionId },
    );
    const recordings = JSON.parse((await query(["recordings", "--app", app, "--json"])).out);
    for (const r of recordings) expect(r.status).toBe("archived");
    const stats = JSON.parse((await query(["stats", "--json"])).out);
    expect(stats.items.groups).toBeGreaterThan(0);
    expect(stats.outcomes.projector.projected).toBeGreaterThan(0);
  });

  it("accepts a credential added to its store at its first use, without a restart (#32: the store the stack re-reads)", async () => {
    // Prepare: the store as start wrote it (the dev credential), and a second credential added,
    // as a rotation adds one.
    const path = credentialsFilePath(dir);
    const stored = JSON.parse(readFileSync(path, "utf8")) as {
      credentials: Array<{ username: string; password: string }>;
    };
    expect(stored.credentials).toEqual([stack.info.credentials]);
    expect(statSync(path).mode & 0o077).toBe(0);
    const added = { username: "rotated", password: "a-new-password-1234" };
    const body = JSON.stringify({ ...fixture("group_created"), appId: "e2e-rotation" });
    expect((await postWebhook({ ...stack.info, credentials: added }, body)).status).toBe(401);
    writeFileSync(path, JSON.stringify({ credentials: [...stored.credentials, added] }));

    // Act, Assess: the new one is accepted once a miss re-reads the store (the refused attempt
    // just re-read it; the next re-read after a miss is 5 s later), the old one still is.
    let status = 0;
    for (const deadline = Date.now() + 20_000; status !== 200 && Date.now() < deadline; ) {
      status = (await postWebhook({ ...stack.info, credentials: added }, body)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(200);
    expect((await postWebhook(stack.info, body)).status).toBe(200);
    writeFileSync(path, JSON.stringify(stored));
  });

  it("prints readable tables without --json, and a clear error for a missing option", async () => {
    const [app] = APPS;
    const text = await query(["online", "--app", app ?? ""]);
    expect(text.out.split("\n")[0]).toMatch(/^uid\s+name\s+since\s+platform/);
    const missing = await query(["group", "g1"]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain("--app");
    const nothing = await query(["group", "no-such-group", "--app", app ?? "", "--json"]);
    expect(nothing.out).toBe("null");
  });

  it("shows an invalid event in the quarantine with its error, and finds it to resend; shows dead letters without consuming them", async () => {
    // An invalid event: accepted at the edge (it is JSON with a trigger), refused by its schema.
    const invalid = fixture("group_member_scope_changed");
    invalid.appId = "e2e-ops";
    delete invalid.data.members["cometchat-uid-2"].scope;
    const body = JSON.stringify(invalid);
    const { eventId = "" } = await postWebhook(stack.info, body);
    await waitForDrain(stack.info, 120);
    const quarantined = JSON.parse(
      (await cli(["query", "quarantine", "--app", "e2e-ops", "--json", "--state-dir", dir])).stdout,
    );
    expect(quarantined).toEqual([
      expect.objectContaining({
        eventId,
        trigger: "group_member_scope_changed",
        appId: "e2e-ops",
        error: expect.stringContaining("scope"),
      }),
    ]);
    const traced = JSON.parse((await cli(["query", "event", eventId, "--json", "--state-dir", dir])).stdout);
    expect(traced).toMatchObject({
      eventId,
      trigger: "group_member_scope_changed",
      appId: "e2e-ops",
      outcome: "quarantined",
      error: expect.stringContaining("scope"),
    });
    expect(traced.receivedAt).toBeGreaterThan(0);
    const resend = await cli(["resend", eventId, "--app", "e2e-ops", "--dry-run", "--state-dir", dir]);
    expect(resend.stdout).toContain(
      `would resend ${eventId.slice(0, 16)}: group_member_scope_changed of e2e-ops`,
    );
    expect(resend.stdout).toContain("from the quarantine");

    // A poisoned message in the DLQ: listed with its attributes and receive count, and still there.
    await stack.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: stack.info.queues.events.deadLetterUrl,
        MessageBody: "{}",
        MessageAttributes: {
          trigger: { DataType: "String", StringValue: "group_created" },
          appId: { DataType: "String", StringValue: "e2e-poison" },
          eventId: { DataType: "String", StringValue: "d".repeat(64) },
        },
      }),
    );
    const dlq = JSON.parse((await cli(["query", "dlq", "--json", "--state-dir", dir])).stdout);
    expect(dlq).toEqual([
      expect.objectContaining({
        attributes: { trigger: "group_created", appId: "e2e-poison", eventId: "d".repeat(64) },
        body: "{}",
      }),
    ]);
    expect(
      JSON.parse((await cli(["query", "event", "d".repeat(64), "--json", "--state-dir", dir])).stdout),
    ).toMatchObject({
      outcome: "dead-lettered",
      appId: "e2e-poison",
    });
    expect((await cli(["redrive", "--queue", "events", "--dry-run", "--state-dir", dir])).stdout).toContain(
      "events: would move 1 message(s)",
    );
    expect(JSON.parse((await cli(["query", "dlq", "--json", "--state-dir", dir])).stdout)).toHaveLength(1);
    // Clear it (it would fail again): the next test uses the DLQ.
    await stack.clients.sqs.send(new PurgeQueueCommand({ QueueUrl: stack.info.queues.events.deadLetterUrl }));

    // A valid event resent from the raw archive is projected again: stale, as it is already in the tables.
    const delivered = report.history.events.find((e) => e.trigger === "group_created" && e.appId === APPS[0]);
    const archivedId = createHash("sha256")
      .update(delivered?.body ?? "")
      .digest("hex");
    const staleBefore = readStats(dir).apps[APPS[0] ?? ""]?.projector?.stale ?? 0;
    const sent = await cli(["resend", archivedId, "--app", APPS[0] ?? "", "--state-dir", dir]);
    expect(sent.stdout).toContain(`resent ${archivedId.slice(0, 16)}: group_created of ${APPS[0]}`);
    expect(sent.stdout).toContain("from the archive");
    await waitForDrain(stack.info, 120);
    expect(readStats(dir).apps[APPS[0] ?? ""]?.projector?.stale).toBe(staleBefore + 1);
    // The pure projections say what it did: the group item holds its creation.
    const projected = JSON.parse(
      (await cli(["query", "event", archivedId, "--app", APPS[0] ?? "", "--json", "--state-dir", dir]))
        .stdout,
    );
    expect(projected).toMatchObject({ eventId: archivedId, trigger: "group_created", outcome: "projected" });
    expect(projected.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ table: "groups", state: "includes it" })]),
    );
  });

  it("redrives a dead-lettered event and projects it", async () => {
    const event = fixture("group_created");
    event.appId = "e2e-redrive";
    const body = JSON.stringify(event);
    await stack.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: stack.info.queues.events.deadLetterUrl,
        MessageBody: body,
        MessageAttributes: {
          trigger: { DataType: "String", StringValue: "group_created" },
          appId: { DataType: "String", StringValue: "e2e-redrive" },
          receivedAt: { DataType: "Number", StringValue: String(Date.now()) },
        },
      }),
    );
    expect(
      await redrive(stack.clients.sqs, stack.info.queues.events.deadLetterUrl, stack.info.queues.events.url),
    ).toBe(1);
    await waitForDrain(stack.info, 120);
    const g = await query(["group", "cometchat-guid-1", "--app", "e2e-redrive", "--json"]);
    expect(JSON.parse(g.out)).toMatchObject({ name: "Hiking Group" });
  });

  it("replays the raw archive into empty tables and gets the same tables", async () => {
    const fresh = localTableNames("replayed");
    await createProjectionTables(stack.clients.dynamo, fresh);
    const archive = s3BlobStore(stack.clients.s3, stack.info.bucket);
    // The archive lease as a command takes it (the stack's rollup timer may hold it a moment).
    const lease = archiveLease(
      { doc: documentClient(stack.clients.dynamo), tableName: stack.info.activityTable ?? "" },
      Date.now,
      COMMAND_LEASE_WAIT,
    );
    const replayed = await replayArchive(
      stack.clients.s3,
      archive,
      {
        stores: projectionStores(stack.clients.dynamo, fresh),
        dataStore: archive,
        recordingJobs: { send: async () => undefined },
        now: Date.now,
      },
      lease,
    );
    expect(replayed.events).toBeGreaterThan(800);
    // The recordings' archive status is the recorder's, not an event's: a recording job finds the
    // object already in the bucket (same source, checksum in its metadata) and only links it.
    const sessions = dynamoItemStore<SessionState>(
      documentClient(stack.clients.dynamo),
      SESSIONS_TABLE,
      fresh.sessions,
    );
    for (const e of report.history.events.filter((x) => x.recording)) {
      const { data } = JSON.parse(e.body);
      const job = {
        appId: e.appId,
        sessionId: data.sessionId,
        startTime: data.startTime,
        recordingDate: data.recordingDate,
        recordingUrl: data.recording_url,
        eventId: "replay",
      };
      const relinked = await archiveRecording(job, 1, {
        s3: stack.clients.s3,
        bucket: stack.info.bucket,
        sessions,
        apiKeyFor: async () => undefined,
        resolver: systemResolver,
        allowHttp: false,
        allowedHosts: [],
        apiKeyHosts: [],
        limits: {
          connectTimeoutMs: 1000,
          idleTimeoutMs: 1000,
          deadlineMs: 5000,
          maxBytes: 1,
          maxRedirects: 0,
          partSize: 5 * 1024 * 1024,
          queueSize: 1,
        },
        now: Date.now,
      });
      expect(relinked).toMatchObject({ status: "archived", skipped: true });
    }
    // The live tables as the simulation left them (read before any test changed them: the
    // reconcile tests rewrite the presence of the app they reconcile).
    expect(await simulatedItems(fresh)).toEqual(simulated);
    // Replaying again changes nothing: over the rebuilt tables, and over the live ones for an app
    // no other test rewrites (the reconcile tests write presence the archive does not hold).
    const replayOver = (tables: typeof fresh, options: { appId?: string } = {}) =>
      replayArchive(
        stack.clients.s3,
        archive,
        {
          stores: projectionStores(stack.clients.dynamo, tables),
          dataStore: archive,
          recordingJobs: { send: async () => undefined },
          now: Date.now,
        },
        lease,
        options,
      );
    expect((await replayOver(fresh)).outcomes.projected).toBe(0);
    const untouched = await replayOver(stack.info.tables, { appId: APPS[1] ?? "" });
    expect(untouched.events).toBeGreaterThan(0);
    expect(untouched.outcomes.projected).toBe(0);
  });

  it("reconciles presence from the simulated platform through `npx webhook reconcile`: nobody's status was wrong, and a second run changes nothing", async () => {
    const api = await startPlatformApi(report.history.expected);
    try {
      const app = APPS[0] ?? "";
      const args = [
        "reconcile",
        "--app",
        app,
        "--platform-url",
        api.baseUrl(app),
        "--api-key",
        simulatedApiKey(app),
        "--per-page",
        "7",
        "--state-dir",
        dir,
        "--json",
      ];
      const first = await cli(args);
      expect(first.code).toBe(0);
      // Users who never connected get a presence item, offline; nobody is set online or offline otherwise.
      const online = await analyticsQueries(documentClient(stack.clients.dynamo), stack.info.tables).online(
        app,
      );
      expect(JSON.parse(first.stdout)).toMatchObject({ appId: app, seen: 30, setOnline: 0, complete: true });
      expect(new Set(online.map((p) => p.uid))).toEqual(report.history.expected.get(app)?.online);
      const second = JSON.parse((await cli(args)).stdout);
      expect(second).toMatchObject({ seen: 30, setOnline: 0, setOffline: 0, unchanged: 30 });
    } finally {
      await api.close();
    }
  });

  it("end to end: a history delivered with a stretch of presence dropped is wrong about who is online, and `reconcile` against the simulated platform makes it right", async () => {
    const dropped = await runSimulation({
      url: stack.info.webhookUrl,
      username: stack.info.credentials.username,
      password: stack.info.credentials.password,
      events: 400,
      rate: 2000,
      concurrency: 8,
      seed: 21,
      apps: ["e2e-reconcile"],
      duplicateShare: 0,
      reorderShare: 0,
      dropPresence: 0.5,
      platformPort: 0,
      stack: stack.info,
      settleTimeoutSeconds: 60,
    });
    const platform = dropped.platform;
    if (!platform) throw new Error("no platform API");
    try {
      expect(dropped.dropped).toBeGreaterThan(0);
      expect(dropped.problems?.some((p) => p.includes("should be"))).toBe(true);
      const out = await cli([
        "reconcile",
        "--app",
        "e2e-reconcile",
        "--platform-url",
        platform.baseUrl("e2e-reconcile"),
        "--api-key",
        simulatedApiKey("e2e-reconcile"),
        "--state-dir",
        dir,
        "--json",
      ]);
      expect(out.code).toBe(0);
      const queries = analyticsQueries(documentClient(stack.clients.dynamo), stack.info.tables);
      expect(await checkTables(dropped.history, queries, { recordings: false })).toEqual([]);
    } finally {
      await platform.close();
    }
  });

  it("prints pure JSON with --json through `npx webhook` (no npm banner on stdout)", async () => {
    const out = await cli(["query", "stats", "--json", "--state-dir", dir]);
    expect(out.code).toBe(0);
    const parsed = JSON.parse(out.stdout);
    expect(parsed.outcomes.projector.projected).toBeGreaterThan(0);
  });

  // In a terminal (util-linux `script` gives it one), a Ctrl-C typed as a user types it.
  it.skipIf(spawnSync("script", ["--version"]).status !== 0)(
    "simulate names its apps, and on Ctrl-C prints a partial summary and shows the cursor again",
    async () => {
      const command = [
        join(ROOT, "node_modules/.bin/node"),
        join(ROOT, "bin/webhook.mjs"),
        "simulate",
        // Far more than it delivers before the Ctrl-C (at 50/s), and few enough to generate at
        // once: 100,000 took most of the test's minute to generate on a busy machine.
        "--events",
        "10000",
        "--rate",
        "50",
        "--apps",
        "ctrl-c-app",
        "--files-port",
        "0",
        "--state-dir",
        dir,
      ].join(" ");
      const child = spawn("script", ["-qfec", command, "/dev/null"], {
        cwd: ROOT,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let screen = "";
      child.stdout.on("data", (c: Buffer) => {
        screen += c.toString();
      });
      for (let i = 0; i < 150 && !screen.includes("delivering"); i++)
        await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 500));
      child.stdin.write("\u0003");
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(screen).toContain("apps: ctrl-c-app");
      expect(screen).toContain("\u001b[?25l");
      expect(screen).toMatch(/interrupted: sent \d+ deliveries/);
      expect(screen.lastIndexOf("\u001b[?25h")).toBeGreaterThan(screen.lastIndexOf("\u001b[?25l"));
      expect(code).toBe(130);
    },
  );

  it("stops everything it started: no Java process, no port bound, no state file", async () => {
    // Prepare: a stack of its own (the file's serves the other tests, in whatever order they run).
    const own = mkdtempSync(join(tmpdir(), "local-stack-stop-"));
    const stopped = await startLocalStack({
      port: await freePort(),
      stateDir: own,
      inMemory: true,
      logMode: "silent",
    });
    const pid = stopped.dynamoPid;
    const port = new URL(stopped.info.webhookUrl).port;

    // Act
    await stopped.stop();

    // Assess
    expect(pid).toBeDefined();
    expect(() => process.kill(pid as number, 0)).toThrow();
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once("error", reject);
      probe.listen(Number(port), "127.0.0.1", () => probe.close(() => resolve()));
    });
    expect(existsSync(join(own, "stack.json"))).toBe(false);
  }, 300_000);
});
