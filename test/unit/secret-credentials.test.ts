import { describe, expect, it } from "vitest";
import { authenticateBasic } from "../../shared/ingest/credentials";
import { secretCredentialSource } from "../../shared/ingest/secret-credentials";
import { basic } from "../support/ingest";
import { secretsStub } from "../support/secrets";

describe("the credentials from Secrets Manager", () => {
  it("caches reads, and forces at most one re-read per interval after a miss", async () => {
    // Prepare
    const { client, state } = secretsStub({ username: "old", password: "old-password" });
    let now = 1_000_000;
    const source = secretCredentialSource({
      secretId: "arn:aws:secretsmanager:us-east-1:000000000000:secret:creds",
      maxAgeSeconds: 300,
      minRefreshIntervalMs: 5_000,
      client,
      now: () => now,
    });

    // Act / Assess: the cache serves repeated gets.
    await source.get();
    await source.get();
    expect(state.reads).toBe(1);

    // A rotation: the new pair is valid at once (one forced re-read after the miss).
    state.value = JSON.stringify({
      credentials: [
        { username: "old", password: "old-password" },
        { username: "new", password: "new-password" },
      ],
    });
    expect((await authenticateBasic(basic("new", "new-password"), source)).ok).toBe(true);
    expect(state.reads).toBe(2);

    // A flood of wrong passwords within the interval re-reads nothing more.
    for (let i = 0; i < 20; i++)
      expect((await authenticateBasic(basic("x", `wrong-${i}`), source)).ok).toBe(false);
    expect(state.reads).toBe(2);

    // After the interval, one more miss may re-read once.
    now += 5_001;
    await authenticateBasic(basic("x", "wrong"), source);
    await authenticateBasic(basic("x", "wrong"), source);
    expect(state.reads).toBe(3);
  });
});
