import { App, Stack } from "aws-cdk-lib";
import { Match, Template } from "aws-cdk-lib/assertions";
import { HttpApi } from "aws-cdk-lib/aws-apigatewayv2";
import { Metric } from "aws-cdk-lib/aws-cloudwatch";
import { LogGroup } from "aws-cdk-lib/aws-logs";
import { describe, expect, it } from "vitest";
import { Monitoring } from "../../infra/constructs/monitoring";
import { REFUSALS } from "../../shared/platform/constants";
import { refusalInsightRule, refusalRuleName } from "../../shared/watchdog/refusal-rule";

/** The monitoring construct alone, in a stack of its own (quick: no bundles, no whole-stack synth). */
function monitoringTemplate(): Template {
  const stack = new Stack(new App(), "EdgeAlarms");
  const api = new HttpApi(stack, "Api");
  new Monitoring(stack, "Monitoring", {
    api,
    apiThrottled: new Metric({ namespace: "WebhookBackend", metricName: "EdgeThrottledRequests" }),
    functions: {},
    queues: {},
    ingestLogs: new LogGroup(stack, "IngestLogs"),
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

  it("alarms on refusals per known username (#58): a Contributor Insights rule over the ingest's refusal lines and INSIGHT_RULE_METRIC's MaxContributorValue", () => {
    const rules = Object.values(template.findResources("AWS::CloudWatch::InsightRule"));
    expect(rules).toHaveLength(1);
    // The body joins the log group's name (a token) into the rule's JSON.
    const body = JSON.stringify(rules[0]?.Properties?.RuleBody);
    expect(body).toContain(JSON.stringify(JSON.stringify(refusalInsightRule("x").Contribution)).slice(1, -1));
    expect(body).toContain("IngestLogs");
    const alarm = Object.values(template.findResources("AWS::CloudWatch::Alarm")).find((a) =>
      JSON.stringify(a).includes("INSIGHT_RULE_METRIC"),
    );
    const text = JSON.stringify(alarm);
    expect(text).toContain(`INSIGHT_RULE_METRIC('${refusalRuleName("EdgeAlarms")}', 'MaxContributorValue')`);
    expect(alarm?.Properties?.Threshold).toBe(REFUSALS.minRefusals);
    expect(alarm?.Properties?.ComparisonOperator).toBe("GreaterThanOrEqualToThreshold");
    // The runbook in the description runs as written (test/integration/watchdog-runbook.int.test.ts).
    expect(alarm?.Properties?.AlarmDescription).toContain("npx webhook apps --refused --stack <stack>");
  });
});
