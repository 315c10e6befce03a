import { describe, expect, it } from "vitest";
import { ArchiveLeaseLostError, ArchiveLockedError } from "../../shared/adapters/archive-lease";
import { leaseWaitNote } from "../../tools/analytics/engines";

/** What a command says of the archive lease held by another (#50: when the lease ends, how long it waits). */
describe("a command's words on the archive lease", () => {
  it("waiting: who holds it, until when unless renewed, and that a stopped run's lease lapses then", () => {
    expect(leaseWaitNote("erasure 3f2a 1a2b3c4d", Date.parse("2026-01-02T10:15:00.500Z"))).toBe(
      "waiting for the archive: erasure 3f2a 1a2b3c4d holds it until 2026-01-02T10:15:00Z unless it renews it (trying every 2 s for 5 minutes, or until then if later: a run that was stopped lets its lease lapse then)",
    );
  });

  it("giving up, and a lease lost: who, until when, and what to do", () => {
    expect(
      new ArchiveLockedError("pass 2026-01-02 0a0b0c0d", 300_000, Date.parse("2026-01-02T10:20:00Z")).message,
    ).toBe(
      "the archive is still being rewritten by pass 2026-01-02 0a0b0c0d after 300 s of waiting, whose lease runs until 2026-01-02T10:20:00Z unless renewed: try again when it ends",
    );
    expect(new ArchiveLeaseLostError("erasure 3f2a 1a2b3c4d").message).toBe(
      "the archive lease of erasure 3f2a 1a2b3c4d lapsed (not renewed for 15 minutes) and was taken by another rewrite meanwhile: stopped before its next change; run it again",
    );
  });
});
