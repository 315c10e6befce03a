import { describe, expect, it } from "vitest";
import { readableLine } from "../../tools/local/log-tap";

const ID = "33db60451d28b006".padEnd(64, "7");

describe("the local stack's readable log lines", () => {
  it("print an event id in its one printed form: the first 16 hex characters", () => {
    const line = readableLine({ level: "INFO", service: "projector", message: "event", eventId: ID });
    expect(line).toContain(`event=${ID.slice(0, 16)}`);
    expect(line).not.toContain(ID.slice(0, 17));
  });
});
