import { describe, expect, it } from "vitest";
import { lazyBlobStore, lazyMessageQueue } from "../../shared/adapters/lazy-adapters";
import { memoryStore, recordingQueue } from "../support/ingest";

describe("adapters built on first use", () => {
  it("builds the store at the first call only, and once for calls made together", async () => {
    // Prepare
    const inner = memoryStore();
    let loads = 0;
    const store = lazyBlobStore(inner.bucket, async () => {
      loads++;
      return inner;
    });

    // Act
    const before = loads;
    await Promise.all([store.put("a", "1"), store.put("b", "2")]);
    const text = await store.getText("a");

    // Assess
    expect(before).toBe(0);
    expect(loads).toBe(1);
    expect(text).toBe("1");
    expect([...inner.objects.keys()].sort()).toEqual(["a", "b"]);
  });

  it("tries the load again after it failed, and the failed call rejects with its error", async () => {
    // Prepare: the first load fails (a chunk that could not be read), the second works.
    const inner = recordingQueue();
    let loads = 0;
    const queue = lazyMessageQueue(async () => {
      loads++;
      if (loads === 1) throw new Error("chunk not readable");
      return inner;
    });
    const message = { body: "{}", attributes: { trigger: "recording_generated" } };

    // Act
    const first = queue.send(message);

    // Assess
    await expect(first).rejects.toThrow("chunk not readable");
    await queue.send(message);
    expect(loads).toBe(2);
    expect(inner.sent).toEqual([message]);
  });
});
