import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../tools/local/emulators";
import { generateHistory } from "../../tools/simulate/generator";
import { startImportApi } from "../../tools/simulate/import-api";
import { simulatedApiKey } from "../../tools/simulate/platform-api";
import { spawnWebhook, webhookCli } from "../support/cli";
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
  it("is killed mid-way (SIGKILL), re-run, and the platform has received each user once; the backend recorded them all", async () => {
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
    } finally {
      await platform.close();
      stack.child.kill("SIGINT");
      await exited(stack.child);
    }
  }, 240_000);
});
