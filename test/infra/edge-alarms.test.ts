import { App, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import { Metric } from "aws-cdk-lib/aws-cloudwatch";
import { describe, expect, it } from "vitest";
import { Monitoring } from "../../infra/constructs/monitoring";
import { REFUSALS } from "../../shared/platform/constants";

/** The monitoring construct alone, in a stack of its own (quick: no bundles, no whole-stack synth). */
function monitoringTemplate(): Template {
  const stack = new Stack(new App(), "EdgeAlarms");
  const api = new HttpApi(stack, "Api");
  new Monitoring(stack, "Monitoring", {
    api,
    apiThrottled: new Metric({ namespace: "WebhookBackend", metricName: "EdgeThrottledRequests" }),
    functions: {},
    queues: {},
  });
  return Template.fromStack(stack);
}

describe("the edge is watched (#52): one alarm for silent apps, one for refused deliveries", () => {
  const template = monitoringTemplate();

  it("alarms when any app is silent, from the rollup's one SilentApps metric (no metric per app)", () => {
    template.hasResourceProperties("AWS::CloudWatch::Alarm", {
      MetricName: "SilentApps",
      Namespace: "WebhookBackend",
      Dimensions: [{ Name: "service", Value: "rollup" }],
      Statistic: "Maximum",
      Period: 900,
      Threshold: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      AlarmActions: [Match.anyValue()],
    });
    const silent = Object.values(template.findResources("AWS::CloudWatch::Alarm")).filter((a) =>
      JSON.stringify(a).includes("SilentApps"),
    );
    expect(silent).toHaveLength(1);
  });

  it("alarms on the share of deliveries refused with 401: metric math over the ingest's unauthorized outcome", () => {
    const alarm = Object.values(template.findResources("AWS::CloudWatch::Alarm")).find((a) =>
      JSON.stringify(a).includes("100 * refused / requests"),
    );
    const text = JSON.stringify(alarm);
    expect(text).toContain(`IF(requests >= ${REFUSALS.minRequests}, 100 * refused / requests, 0)`);
    expect(text).toContain('"MetricName":"IngestRequests"');
    expect(text).toContain('{"Name":"outcome","Value":"unauthorized"}');
    expect(alarm?.Properties?.Threshold).toBe(REFUSALS.sharePercent);
  });
});
