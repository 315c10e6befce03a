import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { METRICS_NAMESPACE, OUTCOME_METRICS, type ServiceName, SILENT_APPS_METRIC } from "./outcomes";

export { METRICS_NAMESPACE };

/** A function's logger and metrics. */
export interface Observability {
  logger: Logger;
  metrics: Metrics;
}

/**
 * A function's logger and metrics, named after the service. Powertools reads its own POWERTOOLS_*
 * variables (log level, metrics switch).
 *
 * @example const obs = observability("projector")
 */
export function observability(service: ServiceName): Observability {
  return {
    logger: new Logger({ serviceName: service }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName: service }),
  };
}

/** The outcomes a service may count: its vocabulary in `outcomes.ts`. */
export type OutcomeOf<S extends ServiceName> = (typeof OUTCOME_METRICS)[S]["outcomes"][number];

/**
 * Counts one occurrence of `outcome` under the service's outcome metric, with an `outcome`
 * dimension. A single metric is flushed (as an EMF log line) at once, so handlers have no buffer
 * to publish.
 *
 * @example countOutcome(metrics, "projector", "quarantined")
 */
export function countOutcome<S extends ServiceName>(
  metrics: Metrics,
  service: S,
  outcome: OutcomeOf<S>,
  value = 1,
): void {
  const single = metrics.singleMetric();
  single.addDimension("outcome", outcome);
  single.addMetric(OUTCOME_METRICS[service].metric, MetricUnit.Count, value);
}

/**
 * Puts the number of apps silent now (#52): one value a scheduled run, 0 included, so that the
 * alarm clears when they send again.
 *
 * @example putSilentApps(metrics, report.silence.silent.length)
 */
export function putSilentApps(metrics: Metrics, silent: number): void {
  metrics.singleMetric().addMetric(SILENT_APPS_METRIC, MetricUnit.Count, silent);
}
