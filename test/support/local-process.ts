import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import { parseRawArchiveObject } from "../../shared/contracts/bucket-layout";
import { emulatorClients } from "../../tools/local/clients";
import type { LocalStackInfo } from "../../tools/local/state";
import { fixture } from "./fixtures";
import { postWebhook } from "./ingest";

// `npm start` as a user runs it: its own process (and process group), to be signalled and killed.
const ROOT = new URL("../../", import.meta.url).pathname;

export interface StartedProcess {
  child: ChildProcess;
  info: LocalStackInfo;
  output: () => string;
}

/** Every stack process started and not yet exited (an afterAll kills their groups). */
export const running = new Set<ChildProcess>();

/**
 * Starts the local stack in its own process group, as `npm start` does (`npm` runs the package's
 * start script; `node` runs it as that script does, without npm), and waits for /health.
 */
export async function startProcess(
  dir: string,
  port: number,
  extra: string[] = [],
  via: "node" | "npm" = "node",
): Promise<StartedProcess> {
  const args = ["--port", String(port), "--state-dir", dir, "--retry-seconds", "1", ...extra];
  const child =
    via === "npm"
      ? spawn("npm", ["start", "--silent", "--", ...args], {
          cwd: ROOT,
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        })
      : spawn(
          join(ROOT, "node_modules/.bin/node"),
          [
            "--no-warnings",
            "--conditions=@webhook-backend/source",
            "--import",
            "tsx",
            "tools/commands/start.ts",
            ...args,
          ],
          { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"] },
        );
  running.add(child);
  dynamoOf.set(child, dir);
  child.once("exit", () => running.delete(child));
  let output = "";
  // Kept for the test, and logged under the test running when it came: printed only if that test
  // fails (vitest.config.ts, `silent: "passed-only"`).
  const capture = (c: Buffer) => {
    output += c.toString();
    console.log("%s", `[npm start, pid ${child.pid}] ${c.toString().trimEnd()}`);
  };
  child.stdout?.on("data", capture);
  child.stderr?.on("data", capture);
  // Ready in seconds on a quiet machine; minutes at load 15 on two cores (issue #56).
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}: ${output}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      const info = JSON.parse(readFileSync(join(dir, "stack.json"), "utf8")) as LocalStackInfo;
      return { child, info, output: () => output };
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`npm start did not become ready: ${output}`);
}

export const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });

/** The DynamoDB Local of each state directory started here (its own process group). */
const dynamoOf = new Map<ChildProcess, string>();

/** Kills the groups of every stack process still running, and their DynamoDB Local (an afterAll). */
export function killAll(): void {
  for (const child of running) {
    if (child.pid) process.kill(-child.pid, "SIGKILL");
    const lock = dynamoOf.get(child);
    try {
      const { dynamoPid } = JSON.parse(readFileSync(join(lock ?? "", "lock.json"), "utf8"));
      if (dynamoPid) process.kill(dynamoPid, "SIGKILL");
    } catch {
      // No lock left, or its DynamoDB Local already gone.
    }
  }
}

/** A distinct membership event of `app` (one group of seven, a new member each time). */
export function memberEvent(app: string, i: number): string {
  const e = fixture("group_member_added");
  e.appId = app;
  e.data.group.guid = `g-${i % 7}`;
  const [uid, member] = Object.entries(e.data.members)[0] as [string, Record<string, unknown>];
  e.data.members = { [`${uid}-${i}`]: { ...member, uid: `${uid}-${i}` } };
  return JSON.stringify(e);
}

/** Every event id in the stack's raw archive. */
export async function archivedEventIds(info: LocalStackInfo): Promise<Set<string>> {
  const { s3, destroy } = emulatorClients(info.endpoints);
  const ids = new Set<string>();
  try {
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: info.bucket, Prefix: "raw/", ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) {
        const bytes = await (
          await s3.send(new GetObjectCommand({ Bucket: info.bucket, Key: o.Key }))
        ).Body?.transformToByteArray();
        for (const line of parseRawArchiveObject(bytes ?? new Uint8Array(), o.Key ?? ""))
          ids.add(line.eventId);
      }
      token = page.NextContinuationToken;
    } while (token);
  } finally {
    destroy();
  }
  return ids;
}

/**
 * Posts `app`'s membership events (`memberEvent`) to a running stack until, after `afterMs`, its
 * whole process group is killed (SIGKILL; its DynamoDB Local is in a group of its own): the ids of
 * the events it acknowledged.
 */
export async function killMidTraffic(
  stack: StartedProcess,
  app: string,
  afterMs = 2_500,
): Promise<Set<string>> {
  const acked = new Set<string>();
  let sending = true;
  const traffic = (async () => {
    for (let i = 0; sending; i++) {
      const { status, eventId } = await postWebhook(stack.info, memberEvent(app, i));
      if (status === 200 && eventId) acked.add(eventId);
    }
  })();
  await new Promise((r) => setTimeout(r, afterMs));
  if (stack.child.pid) process.kill(-stack.child.pid, "SIGKILL");
  await exited(stack.child);
  sending = false;
  await traffic;
  return acked;
}
