import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** cfn-lint is a pip package (not installed by npm ci): the lint tests run where it is on PATH. */
export const cfnLintAvailable = spawnSync("cfn-lint", ["--version"], { encoding: "utf8" }).status === 0;

/** The commercial regions the templates are linted in (resource types and properties vary by region). */
export const COMMERCIAL_REGIONS = [
  "us-east-1",
  "us-east-2",
  "us-west-1",
  "us-west-2",
  "eu-west-1",
  "eu-central-1",
  "ap-south-1",
  "ap-southeast-1",
  "ap-northeast-1",
  "sa-east-1",
  "ca-central-1",
];

/**
 * cfn-lint's errors (`E####`; warnings left out) on a synthesized template, in these regions.
 * Awaited, not spawnSync: a lint of 11 regions can hold a loaded machine over a minute, and
 * vitest's reports from this worker to its main process time out behind a blocked event loop.
 */
export async function cfnLintErrors(template: string, regions = COMMERCIAL_REGIONS): Promise<string[]> {
  const file = join(mkdtempSync(join(tmpdir(), "cfn-lint-")), "template.json");
  writeFileSync(file, template);
  const stdout = await new Promise<string>((resolve) => {
    // cfn-lint exits non-zero when it finds anything: its findings are on stdout either way.
    execFile("cfn-lint", ["--regions", ...regions, "--format", "parseable", "--", file], (_error, out) =>
      resolve(String(out)),
    );
  });
  return stdout.split("\n").filter((line) => /:E\d{4}:/.test(line));
}
