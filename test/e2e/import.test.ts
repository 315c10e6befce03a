import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { addDays, utcDay } from "../../shared/contracts/bucket-layout";
import { freePort } from "../../tools/local/emulators";
import { generateHistory } from "../../tools/simulate/generator";
import { startImportApi } from "../../tools/simulate/import-api";
import { simulatedApiKey } from "../../tools/simulate/platform-api";
import { waitForDrain } from "../../tools/simulate/run";
import { spawnWebhook, webhookCli } from "../support/cli";
import { fixture } from "../support/fixtures";
import { postWebhook } from "../support/ingest";
import { exited, killAll, startProcess } from "../support/local-process";

afterAll(killAll);

/** Waits until `ready()` holds (a condition, not a duration), up to a minute. */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (ready()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("npx webhook import users against the local stack and the simulated platform", () => {
  it("is killed mid-way (SIGKILL), re-run: the platform has received each user once, and the figures count them from their creation", async () => {
    // Prepare: the local stack, a simulated app's users (with when each was created), and the
    // platform's import path that throttles every request from the 4th on until the kill.
    const dir = mkdtempSync(join(tmpdir(), "import-"));
    const stack = await startProcess(dir, await freePort());
    const app = "import-e2e";
    const users = generateHistory({ events: 400, seed: 43, apps: [app] }).expected.get(app)?.users ?? [];
    const created = (i: number) => Date.parse("2026-01-10T12:00:00Z") / 1000 - i * 86_400;
    const file = join(dir, "users.ndjson");
    writeFileSync(
      file,
      users.map((u, i) => JSON.stringify({ uid: u.uid, name: u.name, createdAt: created(i % 5) })).join("\n"),
    );
    let throttling = true;
    let requests = 0;
    const platform = await startImportApi({
      apiKeys: new Map([[app, simulatedApiKey(app)]]),
      perMinute: 100_000,
      faults: () => (throttling && ++requests >= 4 ? 429 : undefined),
    });
    const env = {
      IMPORT_API_KEYS: JSON.stringify({
        [app]: { url: platform.importUrl(app), apiKey: simulatedApiKey(app) },
      }),
    };
    const args = [
      "import",
      "users",
      file,
      "--app",
      app,
      "--state-dir",
      dir,
      "--batch-size",
      "5",
      "--per-minute",
      "6000",
    ];
    try {
      // Act: the first run is killed while the platform throttles it (3 batches confirmed), then re-run.
      const first = spawnWebhook(args, env);
      await until(() => (platform.answers.get(429) ?? 0) > 0, "the platform to throttle the import");
      first.child.kill("SIGKILL");
      await exited(first.child);
      throttling = false;
      const second = await webhookCli([...args, "--json"], env);

      // Assess: every user created once, received once (the throttled requests were taken by no one).
      expect(users.length).toBeGreaterThan(15);
      expect(second.code, second.stderr).toBe(0);
      const summary = JSON.parse(second.stdout);
      expect(summary).toMatchObject({ read: users.length, alreadyImported: 15, imported: users.length - 15 });
      expect(summary.refused).toEqual([]);
      expect([...(platform.users.get(app)?.keys() ?? [])].sort()).toEqual(users.map((u) => u.uid).sort());
      expect([...(platform.received.get(app)?.values() ?? [])]).toEqual(users.map(() => 1));
      // A third run finds everything recorded and sends nothing.
      const third = JSON.parse((await webhookCli([...args, "--json"], env)).stdout);
      expect(third).toMatchObject({ alreadyImported: users.length, toSend: 0, requests: 0 });

      // The figures: an imported user and a newcomer send a message two days ago (a closed day);
      // its final pass writes the day's users. The imported user is not new that day; every
      // imported user counts as created on their createdAt.
      const day = addDays(utcDay(Date.now()), -2);
      for (const [i, uid] of [users[0]?.uid ?? "", "newcomer"].entries()) {
        const body = fixture("message_sent");
        body.appId = app;
        Object.assign(body.data.message, {
          id: `import-e2e-${i}`,
          sender: uid,
          sentAt: Date.parse(`${day}T12:00:00Z`) / 1000 + i,
        });
        body.data.message.data.entities.sender.entity.uid = uid;
        expect((await postWebhook(stack.info, JSON.stringify(body))).status).toBe(200);
      }
      await waitForDrain(stack.info, 120);
      const rollup = await webhookCli(["rollup", "--from", day, "--to", day, "--state-dir", dir, "--json"]);
      expect(rollup.code, rollup.stderr).toBe(0);
      const figures = async (from: string, to: string) => {
        const out = await webhookCli([
          "query",
          "activity",
          "--app",
          app,
          "--from",
          from,
          "--to",
          to,
          "--users",
          "--json",
          "--state-dir",
          dir,
        ]);
        expect(out.code, out.stderr).toBe(0);
        return JSON.parse(out.stdout).days as Array<{
          day: string;
          dau: number;
          newUsers: number;
          createdUsers: number;
        }>;
      };
      expect((await figures(day, day))[0]).toMatchObject({ day, dau: 2, newUsers: 1 });
      const createdDays = await figures(utcDay(created(4) * 1000), utcDay(created(0) * 1000));
      expect(createdDays.map((d) => d.createdUsers)).toEqual(
        [4, 3, 2, 1, 0].map((k) => users.filter((_, i) => i % 5 === k).length),
      );
    } finally {
      await platform.close();
      stack.child.kill("SIGINT");
      await exited(stack.child);
    }
  }, 240_000);
});
