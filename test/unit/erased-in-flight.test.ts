import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ErasedSubject } from "../../shared/erasure/erased-subjects";
import { erasureSubject } from "../../shared/erasure/erasure-state";
import {
  erasedInFlight,
  erasedMark,
  type InFlightDelivery,
  identifiersIn,
} from "../../shared/erasure/in-flight";
import { mentionsUid, redactBody } from "../../shared/erasure/redact";
import { fixtureText } from "../support/fixtures";

/**
 * A delivery in flight that names an erased user, redacted before the projector uses it (#50,
 * "also found"): from a cached list of hashes, one read per cache period, nothing per batch.
 */

const U1 = "cometchat-uid-1";
const ERASED_AT = 1_800_000_000_000;
const mark = (appId: string, until?: number): ErasedSubject =>
  erasedMark({ appId, uid: U1, erasureId: "e-50", pseudonym: "erased-00000000000000aa" }, ERASED_AT, until);
const delivery = (appId: string, receivedAt: number, name = "message_sent"): InFlightDelivery => ({
  appId,
  receivedAt,
  body: fixtureText(name).replace('"appId": "2598234fa1e3b9c"', `"appId": "${appId}"`),
});

describe("erasedInFlight", () => {
  it("redacts a delivery received before the erasure ended that names the user, marked with the erasure; one received after, another app's and one not naming them stay the same objects", async () => {
    // Prepare
    const redact = erasedInFlight(async () => [mark("a", ERASED_AT)], {
      cacheMs: 60_000,
      now: () => ERASED_AT,
    });
    const before = delivery("a", ERASED_AT - 1);
    const after = delivery("a", ERASED_AT + 1);
    const otherApp = delivery("b", ERASED_AT - 1);
    const notNaming = { ...delivery("a", ERASED_AT - 1), body: fixtureText("meeting_started") };

    // Act
    const [redacted, ...kept] = await redact([before, after, otherApp, notNaming]);

    // Assess
    expect(mentionsUid(redacted?.body ?? "", U1)).toBe(false);
    expect(redacted?.body).toContain("erased-00000000000000aa");
    expect(redacted?.body).not.toContain('"hi"');
    expect(redacted?.erasure).toBe("e-50");
    expect(kept[0]).toBe(after);
    expect(kept[1]).toBe(otherApp);
    expect(kept[2]).toBe(notNaming);
  });

  it("marks a delivery whose body the erasure redacted already (kept in the bucket while its pointer was queued) with the erasure; another app's stays the same object", async () => {
    // Prepare: the body as the erasure left it in `oversize/` (their uid as the pseudonym, no mark in a body).
    const redact = erasedInFlight(async () => [mark("a", ERASED_AT)], {
      cacheMs: 60_000,
      now: () => ERASED_AT,
    });
    const rewritten = (appId: string) => {
      const d = delivery(appId, ERASED_AT - 1);
      return { ...d, body: redactBody(d.body, { uid: U1, names: [], pseudonym: "erased-00000000000000aa" }) };
    };
    const [inBucket, otherApp] = [rewritten("a"), rewritten("b")];

    // Act
    const [marked, kept] = await redact([inBucket, otherApp]);

    // Assess: the same body, now marked (its archive line and envelope then say it is redacted).
    expect(marked?.body).toBe(inBucket.body);
    expect(marked?.erasure).toBe("e-50");
    expect(kept).toBe(otherApp);
  });

  it("while the erasure runs (no end yet), redacts every delivery naming the user; an expired mark none", async () => {
    const running = erasedInFlight(async () => [mark("a")], { cacheMs: 1, now: () => ERASED_AT + 5 });
    expect((await running([delivery("a", ERASED_AT + 3)]))[0]?.erasure).toBe("e-50");
    const lapsed = mark("a", ERASED_AT);
    const late = ERASED_AT + (lapsed.expiresAt * 1000 - ERASED_AT) + 1;
    const expired = erasedInFlight(async () => [lapsed], { cacheMs: 1, now: () => late });
    const old = delivery("a", ERASED_AT - 1);
    expect((await expired([old]))[0]).toBe(old);
  });

  it("reads the list once per cache period whatever the batches, and a failed read never fails one (fast-check over batch times)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 30_000 }), { minLength: 1, maxLength: 40 }), async (steps) => {
        // Prepare: a clock moved between batches; a list whose every second read fails.
        let clock = ERASED_AT;
        let reads = 0;
        const errors: unknown[] = [];
        const redact = erasedInFlight(
          async () => {
            reads++;
            if (reads % 2 === 0) throw new Error("throttled");
            return [mark("a", ERASED_AT + 1)];
          },
          { cacheMs: 60_000, now: () => clock, onReadError: (e) => errors.push(e) },
        );

        // Act: a batch at each step; count the reads a 60 s cache allows.
        let allowed = 0;
        let lastRead = Number.NEGATIVE_INFINITY;
        for (const step of steps) {
          clock += step;
          if (clock - lastRead >= 60_000) {
            allowed++;
            lastRead = clock;
          }
          const [out] = await redact([delivery("a", ERASED_AT)]);
          // Assess: the first read succeeded; its list is kept through a failed one.
          expect(out?.erasure).toBe("e-50");
        }
        expect(reads).toBe(allowed);
        expect(errors).toHaveLength(Math.floor(reads / 2));
      }),
    );
  });

  it("looks a delivery's identifiers up by hash: uids, each side of a conversation id, mentions", () => {
    const ids = identifiersIn(
      JSON.stringify({ c: "john_user_john_doe", t: "hi <@uid:ann> there", m: { bob: 1 } }),
    );
    for (const id of ["john", "john_doe", "john_user_john_doe", "ann", "bob"]) expect(ids).toContain(id);
    expect(mark("a").subject).toBe(erasureSubject("a", U1));
    expect(JSON.stringify(mark("a"))).not.toContain(U1);
  });
});
