import { CloudWatchClient, GetMetricStatisticsCommand, ListMetricsCommand } from "@aws-sdk/client-cloudwatch";
import { METRICS_NAMESPACE } from "../../shared/platform/observability";

/** Outcome counts of the last 24 hours from the functions' CloudWatch metrics (deployed stacks). */
export async function cloudWatchOutcomes(): Promise<Record<string, Record<string, number>>> {
  const cw = new CloudWatchClient({});
  const result: Record<string, Record<string, number>> = {};
  try {
    const listed = await cw.send(new ListMetricsCommand({ Namespace: METRICS_NAMESPACE }));
    const end = new Date();
    const start = new Date(end.getTime() - 86_400_000);
    for (const metric of listed.Metrics ?? []) {
      const dims = Object.fromEntries((metric.Dimensions ?? []).map((d) => [d.Name, d.Value]));
      const out = await cw.send(
        new GetMetricStatisticsCommand({
          Namespace: METRICS_NAMESPACE,
          MetricName: metric.MetricName,
          Dimensions: metric.Dimensions,
          StartTime: start,
          EndTime: end,
          Period: 86_400,
          Statistics: ["Sum"],
        }),
      );
      const sum = (out.Datapoints ?? []).reduce((n, d) => n + (d.Sum ?? 0), 0);
      const service = dims.service ?? metric.MetricName ?? "unknown";
      result[service] = { ...result[service], [dims.outcome ?? "total"]: sum };
    }
  } finally {
    cw.destroy();
  }
  return result;
}
