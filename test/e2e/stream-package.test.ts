import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deliveryId, factFields } from "@webhook-backend/stream";
import { parseEventBody, refusalOf } from "@webhook-backend/stream/events/parse-body";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectionStores } from "../../shared/projector/stores";
import { emulatorClients } from "../../tools/local/clients";
import { freePort } from "../../tools/local/emulators";
import { resendEvent } from "../../tools/ops/inspect";
import { waitForDrain } from "../../tools/simulate/run";
import { drainBodies } from "../support/aws";
import { simulatedHistory } from "../support/histories";
import { exited, killAll, type StartedProcess, startProcess } from "../support/local-process";
import { touchedKeys } from "../support/projection";

/**
 * The stream package as a team uses it (#51 item 1): `npm pack` (its `prepack` builds dist/),
 * installed into a scratch project outside the repository with zod from npm's cache, a consumer
 * type-checked by tsc against the tarball's declarations and run (the tarball's JavaScript, and
 * again with the common "source" condition set, as a team's toolchain may: #61 item 10) on what a
 * subscriber of the local stack received; its copy ends with the tables' fact-derived fields, item
 * for item. A CommonJS consumer `require`s it (#61 item 11).
 */
const ROOT = new URL("../../", import.meta.url).pathname;
const BIN = join(ROOT, "node_modules/.bin");
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH}`, npm_config_loglevel: "error" };
const APP = "pkg-app";
const dir = mkdtempSync(join(tmpdir(), "stream-package-stack-"));
const scratch = mkdtempSync(join(tmpdir(), "stream-package-consumer-"));
let stack: StartedProcess;

const versionOf = (name: string) =>
  (JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string })
    .version;

beforeAll(async () => {
  process.env.LOCAL_STREAM_SUBSCRIBERS = JSON.stringify([{ name: "team", apps: [APP] }]);
  stack = await startProcess(dir, await freePort(), ["--console-port", "0"]);
}, 300_000);
afterAll(async () => {
  delete process.env.LOCAL_STREAM_SUBSCRIBERS;
  if (stack && stack.child.exitCode === null) {
    stack.child.kill("SIGINT");
    await exited(stack.child);
  }
  killAll();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the stream package, packed and installed as a team installs it", () => {
  it("type-checks a consumer against the tarball, and its copy of what a subscriber received is the tables' facts", async () => {
    // Prepare: the tarball, a scratch project outside the repository, the consumer type-checked.
    execFileSync("npm", ["pack", "--pack-destination", scratch], { cwd: join(ROOT, "packages/stream"), env });
    const tarball = readdirSync(scratch).find((f) => f.endsWith(".tgz")) ?? "";
    writeFileSync(
      join(scratch, "package.json"),
      JSON.stringify({
        name: "team-consumer",
        private: true,
        type: "module",
        dependencies: { "@webhook-backend/stream": `file:./${tarball}`, zod: versionOf("zod") },
        devDependencies: { "@types/node": versionOf("@types/node") },
      }),
    );
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: scratch, env });
    copyFileSync(join(ROOT, "test/e2e/stream-package/consumer.ts"), join(scratch, "consumer.ts"));
    copyFileSync(join(ROOT, "test/e2e/stream-package/consumer.cts"), join(scratch, "consumer.cts"));
    writeFileSync(
      join(scratch, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          types: ["node"],
          allowImportingTsExtensions: true,
        },
        files: ["consumer.ts", "consumer.cts"],
      }),
    );
    const zodCopies = execFileSync("npm", ["ls", "zod", "--parseable"], { cwd: scratch, env })
      .toString()
      .trim()
      .split("\n");
    execFileSync(join(BIN, "tsc"), ["-p", scratch], { cwd: scratch, env });

    // Prepare: a simulated history of the app through the local stack, with retries enqueued first.
    const history = simulatedHistory(APP, 83, 40).deliveries.filter(
      (d) => !d.body.includes('"recording_generated"'),
    );
    const retries = history
      .filter((_, i) => i % 5 === 0)
      .map((d) => ({ ...d, receivedAt: d.receivedAt + 10_000 }));
    const { sqs, s3, dynamo, destroy } = emulatorClients(stack.info.endpoints);
    try {
      for (const d of [...retries, ...history]) {
        const { trigger, appId } = JSON.parse(d.body) as { trigger: string; appId: string };
        await resendEvent(sqs, s3, stack.info.bucket, stack.info.queues.events.url, { ...d, trigger, appId });
      }
      await waitForDrain(stack.info, 120);
      const bodies = await drainBodies(sqs, stack.info.stream?.subscribers.team?.url ?? "");
      // Two batches as Lambda would give them, the second repeating some of the first (redeliveries).
      const records = bodies.map((body, i) => ({ messageId: `m${i}`, body }));
      const batches = [{ Records: records }, { Records: records.filter((_, i) => i % 3 === 0) }];
      writeFileSync(join(scratch, "batches.json"), JSON.stringify(batches));

      // Act: the tarball's JavaScript, resolved without a condition and with the common "source"
      // set (this repository's own condition is @webhook-backend/source: never sent to src/);
      // and a CommonJS consumer's require.
      const run = (...flags: string[]) =>
        execFileSync(join(BIN, "node"), [...flags, "consumer.ts", "batches.json"], {
          cwd: scratch,
          env,
        }).toString();
      const out = JSON.parse(run()) as {
        reacted: string[];
        failures: unknown[];
        facts: Record<string, unknown>;
      };
      const withSource = JSON.parse(run("--conditions=source")) as typeof out;
      const required = JSON.parse(
        execFileSync(join(BIN, "node"), ["consumer.cts"], { cwd: scratch, env }).toString(),
      ) as Record<string, string>;

      // Assess: one copy of zod; every accepted delivery handled once; the copy is the tables.
      expect(zodCopies.filter((p) => p.endsWith("/zod"))).toHaveLength(1);
      const all = [...history, ...retries];
      const accepted = all.filter((d) => refusalOf(parseEventBody(d.body)) === undefined);
      expect(out.failures).toEqual([]);
      expect(out.reacted.sort()).toEqual(accepted.map((d) => deliveryId(d.eventId, d.receivedAt)).sort());
      const stores = projectionStores(dynamo, stack.info.tables);
      const tables: Record<string, unknown> = {};
      for (const [table, keys] of touchedKeys(all))
        for (const [id, key] of keys) {
          const item = await stores[table].get(key);
          if (item) tables[`${table}:${id}`] = factFields(table, item);
        }
      expect(Object.keys(tables).length).toBeGreaterThan(10);
      expect(out.facts).toEqual(tables);
      expect({ ...withSource, reacted: withSource.reacted.sort() }).toEqual(out);
      expect(required).toEqual({ kind: "delivery", contract: "1.1.0", id: "a#g1|" });
    } finally {
      destroy();
    }
  }, 600_000);
});
