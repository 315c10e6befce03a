import type { VersionedItem } from "@webhook-backend/stream/projections/registry";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadProjectorConfig } from "../../shared/config/function-config";
import { projectorEnvironment } from "../../shared/config/function-environment";
import { ConfigurationError } from "../../shared/platform/errors";
import { withExpiry } from "../../shared/projector/expiry";
import { localTableNames } from "../../tools/local/provision";

const DAY = 86_400;
const item = (fields: Record<string, unknown>) => ({ pk: "a#x", versions: {}, ...fields }) as VersionedItem;

describe("closed items expire (DynamoDB TTL), open ones never", () => {
  it("sets expiresAt from when the item closed, per table", () => {
    const ended = item({ outcome: "ended", endedAt: 1_000_000, startedAt: 900_000 });
    expect(withExpiry("sessions", ended, { sessions: 400 })).toMatchObject({ expiresAt: 1000 + 400 * DAY });
    const rejected = item({ outcome: "rejected", initiatedAt: 2_000_000 });
    expect(withExpiry("sessions", rejected, { sessions: 10 })).toMatchObject({ expiresAt: 2000 + 10 * DAY });
    const left = item({ status: "left", statusAt: 5_000 });
    expect(withExpiry("memberships", left, { memberships: 3 })).toMatchObject({ expiresAt: 5 + 3 * DAY });
    const offline = item({ status: "offline", lastSeen: 7_000 });
    expect(withExpiry("presence", offline, { presence: 2 })).toMatchObject({ expiresAt: 7 + 2 * DAY });
  });

  it("never expires an open item, a ban, a table without a window; an item opened again loses its expiry", () => {
    expect(withExpiry("sessions", item({ outcome: "initiated" }), { sessions: 1 })).not.toHaveProperty(
      "expiresAt",
    );
    expect(
      withExpiry("memberships", item({ status: "banned", statusAt: 1 }), { memberships: 1 }),
    ).not.toHaveProperty("expiresAt");
    expect(withExpiry("presence", item({ status: "offline", lastSeen: 1 }), {})).not.toHaveProperty(
      "expiresAt",
    );
    const back = item({ status: "online", lastSeen: 9_000, expiresAt: 1 });
    expect(withExpiry("presence", back, { presence: 5 })).not.toHaveProperty("expiresAt");
  });

  it("depends on the state alone: the same item gives the same expiry however often (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4e12 }),
        fc.integer({ min: 1, max: 36_500 }),
        (lastSeen, days) => {
          const once = withExpiry("presence", item({ status: "offline", lastSeen }), { presence: days });
          expect(withExpiry("presence", once, { presence: days })).toEqual(once);
        },
      ),
    );
  });

  it("reaches the projector through its environment, and a malformed one is a ConfigurationError", () => {
    const env = projectorEnvironment({
      tables: localTableNames("t"),
      dataBucket: "b",
      recordingsQueueUrl: "q",
      itemExpiryDays: { sessions: 400, presence: 30 },
    });
    expect(loadProjectorConfig(env).itemExpiryDays).toEqual({ sessions: 400, presence: 30 });
    expect(() => loadProjectorConfig({ ...env, ITEM_EXPIRY_DAYS: "messages=3" })).toThrow(ConfigurationError);
  });
});
