import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TableNames } from "../../shared/platform/tables";

/**
 * What a running local stack tells the other commands (`simulate`, `query`, `redrive`, `replay`):
 * written to `<LOCAL_STATE_DIR>/stack.json` while it runs, removed when it stops. It holds the
 * development credentials in use, so the file is readable by its owner only.
 */
export interface LocalStackInfo {
  pid: number;
  webhookUrl: string;
  healthUrl: string;
  region: string;
  endpoints: { aws: string; dynamodb: string };
  tables: TableNames;
  bucket: string;
  queues: Record<"events" | "recordings", { url: string; arn: string; deadLetterUrl: string }>;
  credentials: { username: string; password: string };
  startedAt: string;
}

/** Outcome counters the local stack keeps from its functions' logs (`npm run query -- stats`). */
export interface LocalStats {
  total: Record<string, Record<string, number>>;
  apps: Record<string, Record<string, Record<string, number>>>;
}

export function stateDir(dir = process.env.LOCAL_STATE_DIR ?? ".local"): string {
  return resolve(dir);
}

export function writeStackInfo(dir: string, info: LocalStackInfo): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "stack.json");
  writeFileSync(file, JSON.stringify(info, null, 2));
  chmodSync(file, 0o600);
}

export function removeStackInfo(dir: string): void {
  rmSync(join(dir, "stack.json"), { force: true });
}

/** The running stack's info, or a clear error saying how to start one. */
export function readStackInfo(dir = stateDir()): LocalStackInfo {
  const file = join(dir, "stack.json");
  if (!existsSync(file)) {
    throw new Error(
      `no local stack is running (no ${file}): start one with \`npm start\`, or point to AWS with --stack`,
    );
  }
  return JSON.parse(readFileSync(file, "utf8")) as LocalStackInfo;
}

export function writeStats(dir: string, stats: LocalStats): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "stats.json"), JSON.stringify(stats, null, 2));
}

export function readStats(dir = stateDir()): LocalStats {
  const file = join(dir, "stats.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as LocalStats) : { total: {}, apps: {} };
}
