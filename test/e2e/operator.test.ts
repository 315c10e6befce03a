import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { PurgeQueueCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { archiveLease, COMMAND_LEASE_WAIT } from "../../shared/adapters/archive-lease";
import { documentClient } from "../../shared/adapters/dynamo-item-store";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { quarantineKey } from "../../shared/contracts/bucket-layout";
import { projectionStores } from "../../shared/projector/stores";
import { freePort } from "../../tools/local/emulators";
import { createProjectionTables, localTableNames } from "../../tools/local/provision";
import { type LocalStack, startLocalStack } from "../../tools/local/stack";
import { replayArchive } from "../../tools/ops/operations";
import { analyticsQueries } from "../../tools/query/queries";
import { type FileServer, startFileServer } from "../../tools/simulate/file-server";
import { waitForDrain } from "../../tools/simulate/run";
import { queryIn, spawnWebhook, webhookCli } from "../support/cli";
import { fixture } from "../support/fixtures";
import { postWebhook } from "../support/ingest";

// What an operator types, against one local stack in this process (the commands in their own).
const dir = mkdtempSync(join(tmpdir(), "operator-"));
let stack: LocalStack;
let files: FileServer;
const ids: Record<string, string> = {};

const cli = (...args: string[]) => webhookCli(args, { LOCAL_STATE_DIR: dir });
const query = (...args: string[]) => queryIn(dir, args);

async function post(name: string, event: Record<string, unknown>) {
  const { status, eventId } = await postWebhook(stack.info, JSON.stringify(event));
  expect(status).toBe(200);
  ids[name] = eventId ?? "";
}

beforeAll(async () => {
  // On disk, as `npm start` keeps it: the recordings are files under the state directory.
  stack = await startLocalStack({ port: await freePort(), stateDir: dir, logMode: "silent" });
  await post("created", { ...fixture("group_created"), appId: "op-a" });
  const invalid = fixture("group_member_scope_changed");
  invalid.appId = "op-a";
  delete invalid.data.members["cometchat-uid-2"].scope;
  await post("invalid", invalid);
  await post("message", { ...fixture("message_sent"), appId: "op-a" });
  files = await startFileServer();
  const recording = (sessionId: string, path: string) => {
    const e = fixture("recording_generated");
    e.appId = "op-a";
    e.data.sessionId = sessionId;
    e.data.recording_url = `${files.url}${path}`;
    return e;
  };
  await post("recorded", recording("op-rec-ok", "/recordings/op-2048.mp4"));
  await post("unrecorded", recording("op-rec-404", "/missing.mp4"));
  await waitForDrain(stack.info, 120);
}, 300_000);

afterAll(async () => {
  await files?.close();
  await stack?.stop();
});

describe("one event id everywhere", () => {
  it("query event and resend take the printed form (the first 16 hex characters), and any prefix of 12 or more", async () => {
    const printed = (ids.invalid ?? "").slice(0, 16);
    const listed = await query("quarantine", "--app", "op-a");
    expect(listed.out).toContain(printed);
    expect(listed.out).not.toContain((ids.invalid ?? "").slice(0, 17));

    const traced = await query("event", printed, "--json");
    expect(traced.code).toBe(0);
    expect(JSON.parse(traced.out)).toMatchObject({ eventId: ids.invalid, outcome: "quarantined" });
    const byTwelve = await query("event", (ids.created ?? "").slice(0, 12), "--json");
    expect(JSON.parse(byTwelve.out)).toMatchObject({ eventId: ids.created, outcome: "projected" });

    const resend = await cli("resend", printed, "--dry-run");
    expect(resend.code).toBe(0);
    expect(resend.stdout).toContain(`would resend ${printed}: group_member_scope_changed of op-a`);
  });

  it.each([["nothex"], ["0123456789a"], ["0123456789abcdefg"]])(
    "refuses %s (not hex, or shorter than 12) with exit code 2 in every command that takes an id",
    async (id) => {
      const traced = await query("event", id);
      expect(traced.code).toBe(2);
      expect(traced.err).toContain("12 to 64 hex characters");
      const resend = await cli("resend", id);
      expect(resend.code).toBe(2);
      expect(resend.stderr).toContain("12 to 64 hex characters");
    },
  );

  it("an ambiguous prefix is an error (exit code 2) that lists the matches", async () => {
    const twins = ["a", "b"].map((c) => `0123456789ab${c.repeat(52)}`);
    for (const eventId of twins) {
      const receivedAt = Date.now();
      await stack.clients.s3.send(
        new PutObjectCommand({
          Bucket: stack.info.bucket,
          Key: quarantineKey("op-twins", receivedAt, eventId),
          Body: JSON.stringify({
            eventId,
            receivedAt,
            trigger: "group_created",
            appId: "op-twins",
            body: "{}",
            messageId: "m",
            error: "crafted",
            quarantinedAt: receivedAt,
          }),
        }),
      );
    }
    const traced = await query("event", "0123456789ab");
    expect(traced.code).toBe(2);
    for (const id of twins) expect(traced.err).toContain(id.slice(0, 16));
    const resend = await cli("resend", "0123456789ab", "--dry-run");
    expect(resend.code).toBe(2);
    for (const id of twins) expect(resend.stderr).toContain(id.slice(0, 16));
    // A longer prefix tells them apart.
    expect((await query("event", "0123456789abb", "--json")).code).toBe(0);
  });
});

describe("errors a person can act on", () => {
  it.each([
    ["online", "--app", "op-nobody"],
    ["group", "no-such-group", "--app", "op-a"],
    ["members", "no-such-group", "--app", "op-a"],
    ["sessions", "--app", "op-nobody", "--from", "0", "--to", "2100-01-01"],
    ["quarantine", "--app", "op-nobody"],
    ["event", "fedcba9876543210"],
  ])(
    "one rule for nothing found: %j exits 3 and says so on stderr, --json still prints its value",
    async (...args) => {
      const text = await query(...args);
      expect(text.code).toBe(3);
      // What it printed of where it looked goes to stderr too (#42): stdout holds data only.
      expect(text.err).toMatch(/^nothing found: /m);
      expect(text.out).toBe("");
      const json = await query(...args, "--json");
      expect(json.code).toBe(3);
      expect(() => JSON.parse(json.out)).not.toThrow();
    },
  );

  it("something found exits 0", async () => {
    expect((await query("group", "cometchat-guid-1", "--app", "op-a")).code).toBe(0);
    expect((await query("quarantine", "--app", "op-a")).code).toBe(0);
  });
});

describe("query event for recordings", () => {
  it("reports an archived recording (key, size) and judges its session, of which it is the only event, as including it", async () => {
    const traced = JSON.parse((await query("event", ids.recorded ?? "", "--json")).out);
    expect(traced).toMatchObject({
      outcome: "projected",
      items: [{ table: "sessions", state: "includes it" }],
      recording: {
        status: "archived",
        size: 2048,
        key: expect.stringMatching(/^recordings\/op-a\/.*op-rec-ok/),
      },
    });
    const text = (await query("event", ids.recorded ?? "")).out;
    expect(text).toMatch(/recording\s+archived .*recordings\/op-a\/.*2048 bytes/);
  });

  it("reports a recording whose archive failed, with the reason", async () => {
    const traced = JSON.parse((await query("event", ids.unrecorded ?? "", "--json")).out);
    expect(traced).toMatchObject({
      outcome: "projected",
      items: [{ table: "sessions", state: "includes it" }],
      recording: { status: "failed", failureReason: expect.any(String) },
    });
    const text = (await query("event", ids.unrecorded ?? "")).out;
    expect(text).toMatch(/recording\s+failed: \S+/);
  });
});

describe("honest dry runs", () => {
  it("replay --dry-run predicts, with the projector's own core against the items as they are, what the replay then does", async () => {
    const dry = await cli("replay", "--app", "op-a", "--dry-run", "--json");
    expect(dry.code).toBe(0);
    const predicted = JSON.parse(dry.stdout);
    const real = JSON.parse((await cli("replay", "--app", "op-a", "--json")).stdout);
    expect(predicted).toMatchObject({ dryRun: true, events: real.events });
    expect(predicted.outcomes).toEqual(real.outcomes);
    // Over the live tables: nothing new; the message has no table.
    expect(real.outcomes).toMatchObject({ projected: 0, stale: 3, "archived-only": 1, invalid: 1 });
    const one = JSON.parse(
      (await cli("replay", "--app", "op-a", "--trigger", "group_created", "--dry-run", "--json")).stdout,
    );
    expect(one.outcomes).toMatchObject({ projected: 0, stale: 1 });
  });

  it("predicts into empty tables what a replay into them does, and writes nothing", async () => {
    const fresh = localTableNames(`dry-${Date.now()}`);
    await createProjectionTables(stack.clients.dynamo, fresh);
    const archive = s3BlobStore(stack.clients.s3, stack.info.bucket);
    const deps = {
      stores: projectionStores(stack.clients.dynamo, fresh),
      dataStore: archive,
      recordingJobs: { send: async () => undefined },
      now: Date.now,
    };
    // The archive lease as a command takes it (the stack's rollup timer may hold it a moment).
    const lease = archiveLease(
      { doc: documentClient(stack.clients.dynamo), tableName: stack.info.activityTable ?? "" },
      Date.now,
      COMMAND_LEASE_WAIT,
    );
    const predicted = await replayArchive(stack.clients.s3, archive, deps, lease, {
      appId: "op-a",
      dryRun: true,
    });
    expect(
      await analyticsQueries(documentClient(stack.clients.dynamo), fresh).group("op-a", "cometchat-guid-1"),
    ).toBeUndefined();
    const real = await replayArchive(stack.clients.s3, archive, deps, lease, { appId: "op-a" });
    expect(predicted.outcomes).toEqual(real.outcomes);
    expect(real.outcomes).toMatchObject({ projected: 3, "archived-only": 1 });
  });

  it("redrive and resend answer --json", async () => {
    const redrive = await cli("redrive", "--dry-run", "--json");
    expect(redrive.code).toBe(0);
    expect(JSON.parse(redrive.stdout)).toEqual({ events: { wouldMove: 0 }, recordings: { wouldMove: 0 } });
    const resend = await cli("resend", (ids.created ?? "").slice(0, 16), "--dry-run", "--json");
    expect(JSON.parse(resend.stdout)).toMatchObject({
      eventId: ids.created,
      trigger: "group_created",
      appId: "op-a",
      source: "archive",
      resent: false,
    });
  });
});

describe("fire one event, see recent events", () => {
  it("trigger posts a template to the running stack, with --app and --set, and prints its id", async () => {
    const sent = await cli(
      "trigger",
      "group_created",
      "--app",
      "op-t",
      "--set",
      "data.group.name=Climbers",
      "--set",
      "data.group.membersCount=3",
    );
    expect(sent.code).toBe(0);
    const id = /event ([0-9a-f]{16})\b/.exec(sent.stdout)?.[1];
    expect(id).toBeDefined();
    // trigger returns once its event is projected (#52): `events` typed right after lists it.
    const listed = await cli("events", "--app", "op-t", "--json");
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(listed.stdout))).toContain(id ?? "");
    const group = JSON.parse((await query("group", "cometchat-guid-1", "--app", "op-t", "--json")).out);
    expect(group).toMatchObject({ name: "Climbers", membersCount: 3 });
    expect(JSON.parse((await query("event", id ?? "", "--json")).out)).toMatchObject({
      outcome: "projected",
    });
  });

  it.each([
    [["trigger", "group_craeted"], "group_created"],
    [["trigger", "group_created", "--set", "data.group.name"], "--set"],
  ])("trigger refuses %j with exit code 2, naming %s", async (args, named) => {
    const out = await cli(...args);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(named);
  });

  it("events lists the recent events newest first with id, time, trigger, app and outcome, from the archive and the quarantine", async () => {
    const listed = await cli("events", "--app", "op-a", "--json");
    expect(listed.code).toBe(0);
    const events = JSON.parse(listed.stdout) as Array<{
      eventId: string;
      receivedAt: number;
      outcome: string;
    }>;
    expect(events.map((e) => e.receivedAt)).toEqual(events.map((e) => e.receivedAt).sort((a, b) => b - a));
    const outcome = (name: string) => events.find((e) => e.eventId === ids[name])?.outcome;
    expect([outcome("created"), outcome("invalid"), outcome("message"), outcome("recorded")]).toEqual([
      "projected",
      "quarantined",
      "archived-only",
      "projected",
    ]);
    const text = await cli("events", "--app", "op-a", "--trigger", "recording_generated");
    const lines = text.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^event\s+time\s+trigger\s+app\s+outcome/);
    expect(lines.slice(2)).toHaveLength(2);
    expect(text.stdout).toContain((ids.recorded ?? "").slice(0, 16));
    expect(text.stdout).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/);
  });

  it("events --follow tails new events as they are archived", async () => {
    const { child, written, exit } = spawnWebhook(["events", "--app", "op-f", "--follow"], {
      LOCAL_STATE_DIR: dir,
    });
    try {
      for (let i = 0; i < 100 && !written.stderr.includes("following"); i++)
        await new Promise((r) => setTimeout(r, 100));
      await post("followed", { ...fixture("group_created"), appId: "op-f" });
      const printed = (ids.followed ?? "").slice(0, 16);
      for (let i = 0; i < 150 && !written.stdout.includes(printed); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(written.stdout).toContain(printed);
    } finally {
      child.kill("SIGINT");
      await exit;
    }
  });
});

describe("output a person can read", () => {
  it("shows one item as aligned key/value lines with ISO 8601 UTC times, and keeps epoch values in --json", async () => {
    const text = await query("group", "cometchat-guid-1", "--app", "op-a");
    expect(text.out).toMatch(/^name\s{2,}Hiking Group$/m);
    expect(text.out).toMatch(/^createdAt\s{2,}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    for (const line of text.out.split("\n")) expect(line.length).toBeLessThan(120);
    const session = await query("session", "op-rec-ok", "--app", "op-a");
    expect(session.out).toMatch(/^sessionId\s{2,}op-rec-ok$/m);
    // A recording is named by its start time, in the one time format (#42 item 4).
    expect(session.out).toMatch(/^recording \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s{2,}archived /m);
    const json = JSON.parse((await query("group", "cometchat-guid-1", "--app", "op-a", "--json")).out);
    expect(typeof json.createdAt).toBe("number");
  });

  it("dead letters: ISO time in text, epoch in --json", async () => {
    await stack.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: stack.info.queues.events.deadLetterUrl, MessageBody: "{}" }),
    );
    try {
      const json = JSON.parse((await query("dlq", "--json")).out);
      expect(typeof json[0].sentAt).toBe("number");
      expect((await query("dlq")).out).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z/);
    } finally {
      await stack.clients.sqs.send(
        new PurgeQueueCommand({ QueueUrl: stack.info.queues.events.deadLetterUrl }),
      );
    }
  });

  it("simulate shows progress while it waits for the queues, explains its statuses, and --check-only checks again without sending", async () => {
    const args = [
      "simulate",
      "--events",
      "60",
      "--rate",
      "500",
      "--apps",
      "op-sim",
      "--seed",
      "3",
      "--files-port",
      "0",
    ];
    const first = await cli(...args);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain("waiting for the queues to drain");
    expect(first.stdout).toMatch(/^\s*200\s+accepted\s+\d+$/m);
    expect(first.stdout).toContain("check: the tables match the history");
    const again = await cli(...args, "--check-only");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("check only: nothing sent");
    expect(again.stdout).toContain("check: the tables match the history");
    expect(again.stdout).not.toMatch(/^\s*200\s+accepted/m);
  });
});

describe("recordings locally", () => {
  it("query recordings and query session show each recording's archive status and the file that holds it", async () => {
    const json = JSON.parse((await query("recordings", "--app", "op-a", "--json")).out) as Array<{
      sessionId: string;
      status: string;
      size?: number;
      file?: string;
    }>;
    const archived = json.find((r) => r.sessionId === "op-rec-ok");
    expect(archived).toMatchObject({ status: "archived", size: 2048, file: expect.stringContaining(dir) });
    expect(statSync(archived?.file ?? "").size).toBe(2048);
    expect(json.find((r) => r.sessionId === "op-rec-404")).toMatchObject({ status: "failed" });
    expect(json.find((r) => r.sessionId === "op-rec-404")?.file).toBeUndefined();
    // Within 100 columns by default, the widest left out and said; every one with --wide (#42, walk-4).
    const text = await query("recordings", "--app", "op-a");
    for (const line of text.out.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(text.out).toMatch(/left out to fit 100 columns: --wide shows them/);
    expect((await query("recordings", "--app", "op-a", "--wide")).out).toContain(archived?.file);
    expect((await query("session", "op-rec-ok", "--app", "op-a")).out).toContain(archived?.file);
  });
});

describe("forget on the local stack", () => {
  it("a dry run reports and changes nothing; the erasure redacts, is recorded, shows in query event, and a second run finds nothing", async () => {
    // Prepare: an app of its own, one message of cometchat-uid-1 to cometchat-uid-2.
    const sent = { ...fixture("message_sent"), appId: "op-forget" };
    const { eventId } = await postWebhook(stack.info, JSON.stringify(sent));
    await waitForDrain(stack.info, 120);
    const args = ["forget", "cometchat-uid-1", "--app", "op-forget", "--by", "privacy@example.com", "--json"];

    // Act
    const dry = await cli(...args, "--dry-run");
    const before = await query("event", (eventId ?? "").slice(0, 16), "--json");
    const erased = await cli(...args);
    const after = await query("event", (eventId ?? "").slice(0, 16), "--json");
    const again = await cli(...args);
    const whole = await cli("forget", "--app", "op-forget");

    // Assess
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout);
    expect(planned).toMatchObject({ dryRun: true, appId: "op-forget", scope: "user" });
    expect(planned.plan.objects.length).toBeGreaterThan(0);
    expect(JSON.parse(before.out).erasure).toBeUndefined();
    expect(erased.code, erased.stderr).toBe(0);
    const report = JSON.parse(erased.stdout);
    expect(report).toMatchObject({ dryRun: false, requestedBy: "privacy@example.com" });
    expect(report.counts.linesRedacted).toBeGreaterThan(0);
    expect(JSON.parse(after.out)).toMatchObject({ eventId, erasure: report.erasureId });
    const shown = await query("event", (eventId ?? "").slice(0, 16));
    expect(shown.out).toContain(`redacted by erasure ${report.erasureId}`);
    // What SQL over the archive shows of the app: the pseudonym, never the user.
    const sql = await cli("sql", "SELECT body FROM archive_events WHERE app = 'op-forget'", "--json");
    expect(sql.stdout).toContain(report.pseudonym);
    expect(sql.stdout).not.toContain("cometchat-uid-1");
    expect(sql.stdout).not.toContain("Andrew Joseph");
    expect(JSON.parse(again.stdout).plan.objects).toEqual([]);
    // A whole app is erased only when confirmed.
    expect(whole.code).toBe(2);
    expect(whole.stderr).toContain("--dry-run first, then with --yes");
    // Each run waits until every projector has the erased user's mark before its last look (#50:
    // the local projector's cache of a second, and a batch's longest run, 30 s).
  }, 240_000);
});
