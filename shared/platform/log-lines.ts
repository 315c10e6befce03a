import { METRICS_NAMESPACE, OUTCOME_METRICS, type ServiceName } from "./outcomes";

/**
 * The ingest's log and metric lines without Powertools: the same JSON log line as Powertools'
 * Logger and the same EMF line as its Metrics (`countOutcome`), for the two things the ingest
 * does (a log line at ERROR, WARN or DEBUG, a count per outcome). Logger and Metrics are ~34 KB and
 * ~4 ms of the ingest's cold start (`bench:ingest`), which made it miss both of its targets; every
 * other function keeps Powertools (`observability.ts`). The tests compare these lines with
 * Powertools' own.
 */

/** Powertools' log levels, in its order. */
const LEVELS = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 } as const;

/** Where the lines go: the process's streams, read at each write (so that a tap sees them). */
export interface LineSinks {
  stdout(line: string): void;
  stderr(line: string): void;
}

const processSinks: LineSinks = {
  stdout: (line) => process.stdout.write(line),
  stderr: (line) => process.stderr.write(line),
};

export interface LineObservability<S extends ServiceName> {
  logger: {
    /** An ERROR line, on stderr. */
    error(message: string, fields: Record<string, unknown>): void;
    /** A WARN line, on stderr (Powertools writes WARN there too): a refused delivery's username (#52). */
    warn(message: string, fields: Record<string, unknown>): void;
    /** A DEBUG line, on stdout, when the level lets it through. */
    debug(message: string, fields: Record<string, unknown>): void;
  };
  /** One EMF line counting `value` under the service's outcome metric, `outcome` as a dimension. */
  countOutcome(outcome: (typeof OUTCOME_METRICS)[S]["outcomes"][number], value?: number): void;
}

/**
 * A service's logger and outcome counter writing Powertools' lines. The level is Lambda's
 * (`AWS_LAMBDA_LOG_LEVEL`) when set, else `POWERTOOLS_LOG_LEVEL`, else INFO, as Powertools reads
 * them; `POWERTOOLS_METRICS_DISABLED=true` turns the metric lines off.
 *
 * @example const { logger, countOutcome } = lineObservability("ingest"); countOutcome("unauthorized")
 */
export function lineObservability<S extends ServiceName>(
  service: S,
  env: Readonly<Record<string, string | undefined>> = process.env,
  sinks: LineSinks = processSinks,
): LineObservability<S> {
  const name = (env.AWS_LAMBDA_LOG_LEVEL ?? env.POWERTOOLS_LOG_LEVEL ?? "INFO").toUpperCase();
  const level = LEVELS[name as keyof typeof LEVELS] ?? LEVELS.INFO;
  const metricsOff = env.POWERTOOLS_METRICS_DISABLED?.toLowerCase() === "true";
  const line = (severity: "ERROR" | "WARN" | "DEBUG", message: string, fields: Record<string, unknown>) => {
    // Lambda sets the trace header per invocation: read it at each line, as Powertools does.
    const traceRoot = /(?:^|;)Root=([^;]+)/.exec(env._X_AMZN_TRACE_ID ?? "")?.[1];
    return `${JSON.stringify({
      level: severity,
      message,
      timestamp: new Date().toISOString(),
      service,
      sampling_rate: 0,
      ...(traceRoot ? { xray_trace_id: traceRoot } : {}),
      ...fields,
    })}\n`;
  };
  return {
    logger: {
      error: (message, fields) => {
        if (level <= LEVELS.ERROR) sinks.stderr(line("ERROR", message, fields));
      },
      warn: (message, fields) => {
        if (level <= LEVELS.WARN) sinks.stderr(line("WARN", message, fields));
      },
      debug: (message, fields) => {
        if (level <= LEVELS.DEBUG) sinks.stdout(line("DEBUG", message, fields));
      },
    },
    countOutcome: (outcome, value = 1) => {
      if (metricsOff) return;
      const metric = OUTCOME_METRICS[service].metric;
      const cloudWatchMetrics = [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [["service", "outcome"]],
          Metrics: [{ Name: metric, Unit: "Count" }],
        },
      ];
      sinks.stdout(
        `${JSON.stringify({ _aws: { Timestamp: Date.now(), CloudWatchMetrics: cloudWatchMetrics }, service, outcome, [metric]: value })}\n`,
      );
    },
  };
}
