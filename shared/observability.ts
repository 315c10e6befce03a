import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";

/** CloudWatch namespace of every metric the backend emits (dashboards and alarms use it). */
export const METRICS_NAMESPACE = "WebhookBackend";

/** A function's logger and metrics. Powertools reads its own POWERTOOLS_* variables. */
export function observability(serviceName: string): { logger: Logger; metrics: Metrics } {
  return {
    logger: new Logger({ serviceName }),
    metrics: new Metrics({ namespace: METRICS_NAMESPACE, serviceName }),
  };
}

/**
 * Counts one occurrence of `outcome` under metric `name` with an `outcome` dimension. A single
 * metric is flushed (as an EMF log line) at once, so handlers have no buffer to publish.
 */
export function countOutcome(metrics: Metrics, name: string, outcome: string, value = 1): void {
  const single = metrics.singleMetric();
  single.addDimension("outcome", outcome);
  single.addMetric(name, MetricUnit.Count, value);
}
