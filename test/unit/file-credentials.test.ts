import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileCredentialSource } from "../../shared/ingest/file-credentials";
import { ConfigurationError } from "../../shared/platform/errors";

const file = (credentials: Array<{ username: string; password: string }>) => {
  const path = join(mkdtempSync(join(tmpdir(), "creds-")), "credentials.json");
  writeFileSync(path, JSON.stringify({ credentials }));
  return path;
};
const alice = { username: "alice", password: "alice-password-1" };
const bob = { username: "bob", password: "bob-password-12" };

describe("the local credential store (the file the local stack re-reads, with the secret's cache rules)", () => {
  it("reuses a read for maxAge, sees a change after it, and re-reads after a miss at most every minRefreshInterval", async () => {
    // Prepare
    const path = file([alice]);
    let clock = 0;
    const source = fileCredentialSource({
      path,
      maxAgeSeconds: 60,
      minRefreshIntervalMs: 5_000,
      now: () => clock,
    });
    const names = (list: Array<{ username: string }> | undefined) => list?.map((c) => c.username);

    // Act, Assess: cached within the minute.
    expect(names(await source.get())).toEqual(["alice"]);
    writeFileSync(path, JSON.stringify({ credentials: [alice, bob] }));
    clock = 59_000;
    expect(names(await source.get())).toEqual(["alice"]);
    // A miss re-reads at once, then not again within 5 s.
    expect(names(await source.refresh())).toEqual(["alice", "bob"]);
    writeFileSync(path, JSON.stringify({ credentials: [bob] }));
    clock = 63_000;
    expect(await source.refresh()).toBeUndefined();
    expect(names(await source.get())).toEqual(["alice", "bob"]);
    // The forced read restarted the cache: alice is refused once it has expired.
    clock = 59_000 + 60_000;
    expect(names(await source.get())).toEqual(["bob"]);
  });

  it("names the file, never its content, when it cannot be read or is not JSON", async () => {
    const missing = fileCredentialSource({
      path: "/nonexistent/credentials.json",
      maxAgeSeconds: 60,
      minRefreshIntervalMs: 0,
    });
    await expect(missing.get()).rejects.toThrow(ConfigurationError);
    await expect(missing.get()).rejects.toThrow(
      "cannot read the credentials file /nonexistent/credentials.json",
    );
    const path = file([alice]);
    writeFileSync(path, "{ not json alice-password-1");
    const broken = fileCredentialSource({ path, maxAgeSeconds: 60, minRefreshIntervalMs: 0 });
    const error = await broken.get().catch((e: unknown) => e);
    expect(String(error)).toContain(`the credentials file ${path} is not JSON`);
    expect(String(error)).not.toContain("alice-password-1");
  });
});
