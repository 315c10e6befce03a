import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import { loggedUsername } from "../../shared/platform/log-safe";
import { emulatorClients } from "../../tools/local/clients";
import { credentialsFilePath, fileCredentialStore } from "../../tools/local/credentials-store";
import { freePort } from "../../tools/local/emulators";
import { DEV_PASSWORD, DEV_USERNAME } from "../../tools/local/stack-options";
import type { LocalStackInfo } from "../../tools/local/state";
import { fixture } from "../support/fixtures";
import { postWebhook } from "../support/ingest";
import { exited, killAll, memberEvent, startProcess } from "../support/local-process";

// `npm start` as a person sees it: its own process, its output piped (not a terminal), so the
// status line is printed as plain lines when something moved.
afterAll(killAll);

const dir = mkdtempSync(join(tmpdir(), "start-terminal-"));
const stackJson = () => JSON.parse(readFileSync(join(dir, "stack.json"), "utf8")) as LocalStackInfo;

describe("npm start's terminal (#42 item 1) and its credentials across a restart (#40 item 10)", () => {
  let port = 0;

  it("prints the banner, then a status line of what was posted and every WARN line, never a line per event; each event's line is in the state directory's log", async () => {
    // Prepare
    port ||= await freePort();
    const stack = await startProcess(dir, port, ["--status-every", "1"]);
    const { sqs, destroy } = emulatorClients(stack.info.endpoints);
    try {
      // Act: five events, one the projector quarantines, one refused delivery, and one message
      // whose body is a pointer to nothing (it fails every receive, then is dead-lettered: WARNs).
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const { status, eventId } = await postWebhook(stack.info, memberEvent("term-app", i));
        expect(status).toBe(200);
        ids.push(eventId ?? "");
      }
      const invalid = JSON.stringify({ ...fixture("group_created"), appId: "term-app", data: {} });
      expect((await postWebhook(stack.info, invalid)).status).toBe(200);
      const wrong = { ...stack.info, credentials: { username: "nobody", password: "wrong-password" } };
      expect((await postWebhook(wrong, memberEvent("term-app", 9))).status).toBe(401);
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: stack.info.queues.events.url,
          MessageBody: JSON.stringify({
            bucket: stack.info.bucket,
            key: "oversize/term-app/none.json",
            size: 9,
            eventId: "f".repeat(64),
          }),
          MessageAttributes: {
            trigger: { DataType: "String", StringValue: "group_created" },
            appId: { DataType: "String", StringValue: "term-app" },
            receivedAt: { DataType: "Number", StringValue: String(Date.now()) },
            eventId: { DataType: "String", StringValue: "f".repeat(64) },
            bodyLocation: { DataType: "String", StringValue: "s3" },
          },
        }),
      );

      // Assess: the status line reaches the end state (5 retries of the pointer, then the DLQ).
      await expect
        .poll(() => stack.output(), { timeout: 60_000, interval: 500 })
        .toMatch(/Z {2}accepted 6 {2}refused 1 {2}projected 5 {2}quarantined 1 {2}queued 0 {2}failed 5$/m);
      const output = stack.output();
      expect(output).toContain(`Webhook URL   http://127.0.0.1:${port}/webhook`);
      // The README's simulation, without a seed: on a stack that holds seed 7's apps it picks a
      // fresh seed, where `--seed 7` (the banner's, before) reported the earlier run as differences.
      expect(output).toContain("npm run simulate -- --events 5000 --rate 200 ");
      expect(output).not.toMatch(/npm run simulate .*--seed/);
      expect(output).toMatch(/projector WARN event failed; SQS will retry it/);
      expect(output).toMatch(/projector WARN dead-lettered after 5 failed receives/);
      // No line per event, nor per batch: the banner stays in sight.
      expect(output).not.toMatch(/DEBUG|projector batch|^\{"level"/m);
      // Each event's line is in the state directory's log, the refused delivery's too.
      const log = readFileSync(join(dir, "stack.log"), "utf8");
      for (const id of ids) expect(log).toContain(`event=${id.slice(0, 16)}`);
      // A refusal is a WARN line naming the username presented as the logs keep it (#52, #58), on the terminal too.
      expect(log).toContain(
        `delivery refused outcome=unauthorized status=401 detail=invalid username=${loggedUsername("nobody")} usernameKnown=no`,
      );
      expect(output).toMatch(/ingest +WARN delivery refused outcome=unauthorized/);
      expect(log).toMatch(/outcome=quarantined/);
    } finally {
      destroy();
      stack.child.kill("SIGTERM");
      await exited(stack.child);
    }
  }, 300_000);

  it("keeps a rotated credential across a restart: the banner, stack.json and the ingest use it, and the default pair's 401 says where the current one is", async () => {
    // Prepare: a stack, and the store rewritten as a rotation's last step writes it.
    port ||= await freePort();
    const first = await startProcess(dir, port);
    const rotated = { username: "webhookrotated1", password: "a0b1c2d3e4f5a6b7c8d9" };
    await fileCredentialStore(credentialsFilePath(dir)).write([rotated]);
    const whileRunning = stackJson().credentials;
    first.child.kill("SIGTERM");
    await exited(first.child);

    // Act: `npm start` again, as after Ctrl-C (no WEBHOOK_USERNAME or WEBHOOK_PASSWORD).
    const second = await startProcess(dir, port);
    try {
      const accepted = await postWebhook(
        { ...second.info, credentials: rotated },
        memberEvent("term-app", 20),
      );
      const defaults = { ...second.info, credentials: { username: DEV_USERNAME, password: DEV_PASSWORD } };
      const refused = await fetch(defaults.webhookUrl, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${DEV_USERNAME}:${DEV_PASSWORD}`).toString("base64")}`,
          "content-type": "application/json",
        },
        body: memberEvent("term-app", 21),
      });

      // Assess
      expect(whileRunning).toEqual(rotated);
      expect(second.output()).toContain(`Credentials   ${rotated.username} / ${rotated.password}`);
      expect(second.output()).not.toContain(DEV_PASSWORD);
      expect(stackJson().credentials).toEqual(rotated);
      expect(accepted.status).toBe(200);
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { hint?: string }).hint).toContain(join(dir, "stack.json"));
      expect(JSON.parse(readFileSync(credentialsFilePath(dir), "utf8"))).toEqual({ credentials: [rotated] });
      // The previous start's log is kept beside this one's.
      expect(existsSync(join(dir, "stack.log.1"))).toBe(true);
    } finally {
      second.child.kill("SIGTERM");
      await exited(second.child);
    }
  }, 300_000);
});
