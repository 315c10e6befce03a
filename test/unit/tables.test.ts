import { ONLINE_SHARDS, RECORDING_SHARDS, shardKey } from "@webhook-backend/stream/projections/keys";
import { describe, expect, it } from "vitest";
import { monthBuckets, shardKeys, shardQueries } from "../../shared/platform/tables";

describe("the index keys that spread a large app", () => {
  it("puts a time range into its UTC month buckets, across a year's end", () => {
    expect(monthBuckets("a", Date.UTC(2025, 10, 20), Date.UTC(2026, 1, 1))).toEqual([
      "a#2025-11",
      "a#2025-12",
      "a#2026-01",
      "a#2026-02",
    ]);
    expect(monthBuckets("a", Date.UTC(2026, 0, 5), Date.UTC(2026, 0, 6))).toEqual(["a#2026-01"]);
    expect(monthBuckets("a", Date.UTC(2026, 1, 1), Date.UTC(2026, 0, 1))).toEqual([]);
  });

  it("shards by a stable hash: the same id always lands in the same shard, and the shards are all used", () => {
    expect(shardKey("app", "u1", ONLINE_SHARDS)).toBe(shardKey("app", "u1", ONLINE_SHARDS));
    const used = new Set(Array.from({ length: 500 }, (_, i) => shardKey("app", `u${i}`, ONLINE_SHARDS)));
    expect([...used].sort()).toEqual(shardKeys("app", ONLINE_SHARDS).sort());
  });

  it("queries every shard of a sharded index by the index's own partition key", () => {
    expect(shardQueries("app", "online")).toEqual(
      shardKeys("app", ONLINE_SHARDS).map((shard) => ({
        IndexName: "online",
        KeyConditionExpression: "onlineShard = :s",
        ExpressionAttributeValues: { ":s": shard },
      })),
    );
    expect(shardQueries("app", "withRecording").map((q) => q.KeyConditionExpression)).toEqual(
      Array(RECORDING_SHARDS).fill("recordingShard = :s"),
    );
  });
});
