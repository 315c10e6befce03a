import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { lineObservability } from "../../shared/platform/log-lines";
import { countOutcome, observability } from "../../shared/platform/observability";

/** What a call wrote on stdout and stderr (Powertools writes through the process's streams). */
function written(act: () => void): { stdout: string; stderr: string } {
  const out = { stdout: "", stderr: "" };
  const spies = (["stdout", "stderr"] as const).map((name) =>
    vi.spyOn(process[name], "write").mockImplementation((chunk: string | Uint8Array) => {
      out[name] += String(chunk);
      return true;
    }),
  );
  try {
    act();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return out;
}

// The ingest writes its lines without Powertools (a cold-start saving): they must be the lines
// Powertools' Logger and Metrics write, field for field, so that logs, metric filters, the
// dashboard and the alarms read them the same.
describe("the ingest's log and metric lines", () => {
  const fields = {
    outcome: "enqueue-failed",
    eventId: "e1",
    status: 503,
    error: { name: "Error", message: "down" },
  };

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-01-02T03:04:05.678Z"));
    vi.stubEnv(
      "_X_AMZN_TRACE_ID",
      "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0",
    );
    vi.stubEnv("AWS_LAMBDA_LOG_LEVEL", undefined);
    vi.stubEnv("POWERTOOLS_METRICS_DISABLED", undefined);
  });

  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllEnvs();
  });

  it("writes Powertools' ERROR line at INFO, and no DEBUG line", () => {
    vi.stubEnv("POWERTOOLS_LOG_LEVEL", "INFO");
    const powertools = observability("ingest").logger;
    const ours = lineObservability("ingest").logger;

    const expected = written(() => {
      powertools.error("event not stored", fields);
      powertools.debug("webhook", fields);
    });
    const actual = written(() => {
      ours.error("event not stored", fields);
      ours.debug("webhook", fields);
    });

    expect(expected.stderr).toContain('"xray_trace_id":"1-5759e988-bd862e3fe1be46a994272793"');
    expect(actual).toEqual(expected);
  });

  it("writes Powertools' WARN line (a refused delivery's username, #52), and none at ERROR", () => {
    const refused = { outcome: "unauthorized", detail: "invalid", status: 401, username: "old-user" };
    vi.stubEnv("POWERTOOLS_LOG_LEVEL", "INFO");
    const expected = written(() => observability("ingest").logger.warn("delivery refused", refused));
    const actual = written(() => lineObservability("ingest").logger.warn("delivery refused", refused));
    expect(expected.stderr).toContain('"level":"WARN"');
    expect(actual).toEqual(expected);
    vi.stubEnv("POWERTOOLS_LOG_LEVEL", "ERROR");
    expect(written(() => lineObservability("ingest").logger.warn("delivery refused", refused))).toEqual({
      stdout: "",
      stderr: "",
    });
  });

  it("writes Powertools' DEBUG line when the level is DEBUG", () => {
    vi.stubEnv("POWERTOOLS_LOG_LEVEL", "DEBUG");
    const powertools = observability("ingest").logger;
    const ours = lineObservability("ingest").logger;

    const expected = written(() => powertools.debug("webhook", fields));
    const actual = written(() => ours.debug("webhook", fields));

    expect(expected.stdout).toContain('"level":"DEBUG"');
    expect(actual).toEqual(expected);
  });

  it("writes Powertools' EMF line for an outcome, and none when metrics are disabled", () => {
    const { metrics } = observability("ingest");
    const ours = lineObservability("ingest");

    const expected = written(() => countOutcome(metrics, "ingest", "unauthorized"));
    const actual = written(() => ours.countOutcome("unauthorized"));
    vi.stubEnv("POWERTOOLS_METRICS_DISABLED", "true");
    const disabled = written(() => lineObservability("ingest").countOutcome("unauthorized"));

    expect(expected.stdout).toContain('"IngestRequests":1');
    expect(actual).toEqual(expected);
    expect(disabled).toEqual({ stdout: "", stderr: "" });
  });
});
