import { Duration, Validations } from "aws-cdk-lib";
import { AccessLogFormat } from "aws-cdk-lib/aws-apigateway";
import {
  type CfnStage,
  DomainName,
  HttpApi,
  HttpMethod,
  type HttpStage,
  LogGroupLogDestination,
} from "aws-cdk-lib/aws-apigatewayv2";
import { HttpLambdaIntegration } from "aws-cdk-lib/aws-apigatewayv2-integrations";
import { Certificate } from "aws-cdk-lib/aws-certificatemanager";
import type { Metric } from "aws-cdk-lib/aws-cloudwatch";
import type { IFunction } from "aws-cdk-lib/aws-lambda";
import { FilterPattern, LogGroup, MetricFilter, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import { METRICS_NAMESPACE } from "../../shared/platform/observability";
import { webhookPath } from "../../shared/platform/webhook-path";

/** The metric of the requests the edge's throttle refused (429), counted from the access log. */
export const THROTTLED_REQUESTS_METRIC = "EdgeThrottledRequests";

/**
 * The access log line: what an operator uses to find a request (its id, the caller, the time) and
 * what became of it (status, latency, the integration's error). One route and one method: no path
 * or method. Log bytes are billed per event (`npm run bench:cost`).
 */
export const ACCESS_LOG_FORMAT = {
  requestId: "$context.requestId",
  ip: "$context.identity.sourceIp",
  time: "$context.requestTimeEpoch",
  status: "$context.status",
  latency: "$context.responseLatency",
  error: "$context.integrationErrorMessage",
};

export interface WebhookIngestProps {
  readonly handler: IFunction;
  /** Steady-state requests per second before API Gateway answers 429 (`edgeSizing` in config). @default 500 */
  readonly rateLimit?: number;
  /** Requests API Gateway absorbs in a burst above the rate (`edgeSizing` in config). @default 1000 */
  readonly burstLimit?: number;
  /** Retention of the access logs. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /**
   * The webhook URL's secret path segment (`/webhook/<token>`): any other path matches no route,
   * and API Gateway answers 404 without invoking anything. @default - `/webhook`
   */
  readonly pathToken?: string;
  /**
   * A custom domain (its ACM certificate in the stack's region): the webhook URL names it, and the
   * execute-api endpoint is turned off, so the domain is the only way in. @default - the execute-api URL
   */
  readonly domain?: { readonly name: string; readonly certificateArn: string };
}

/**
 * The public edge: an HTTP API with one route, `POST /webhook`, to the ingest function. Default
 * route throttling turns overload into 429s; access logs are JSON in their own log group.
 * Authentication (HTTP Basic) is done by the function, which is how the platform signs deliveries.
 */
export class WebhookIngest extends Construct {
  public readonly api: HttpApi;
  public readonly stage: HttpStage;
  public readonly accessLogs: LogGroup;
  /** The URL to paste into the platform's webhook settings. */
  public readonly webhookUrl: string;
  /** The custom domain, when given: its DNS record points at `regionalDomainName`. */
  public readonly domainName?: DomainName;
  /**
   * Requests answered 429 by the throttle, per minute (Sum). The HTTP API has no metric of its own
   * for them (its `4xx` also counts the function's 400/401/403), so a metric filter counts the
   * access log lines whose status is 429: the function never sees these requests.
   */
  public readonly throttledRequests: Metric;

  constructor(scope: Construct, id: string, props: WebhookIngestProps) {
    super(scope, id);
    this.accessLogs = new LogGroup(this, "AccessLogs", {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
    });
    this.api = new HttpApi(this, "Api", {
      createDefaultStage: false,
      description: "Webhook deliveries of the chat platform",
      // With a custom domain, the execute-api URL would be a second door that skips it.
      disableExecuteApiEndpoint: props.domain !== undefined,
    });
    const throttle = { rateLimit: props.rateLimit ?? 500, burstLimit: props.burstLimit ?? 1000 };
    const domainName = props.domain
      ? new DomainName(this, "Domain", {
          domainName: props.domain.name,
          certificate: Certificate.fromCertificateArn(this, "Certificate", props.domain.certificateArn),
        })
      : undefined;
    this.domainName = domainName;
    this.stage = this.api.addStage("Stage", {
      stageName: "$default",
      autoDeploy: true,
      throttle,
      domainMapping: domainName ? { domainName } : undefined,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FORMAT)),
      },
    });
    const path = webhookPath(props.pathToken);
    const [route] = this.api.addRoutes({
      path,
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration("Ingest", props.handler),
    });
    // The route's own throttle bucket (route-level settings override the stage's defaults), so
    // that what a stranger sends to another path is not counted against the deliveries' route.
    const cfnStage = this.stage.node.defaultChild as CfnStage;
    // CloudFormation's own names: RouteSettings is JSON, passed as it is.
    cfnStage.routeSettings = {
      [`POST ${path}`]: {
        ThrottlingRateLimit: throttle.rateLimit,
        ThrottlingBurstLimit: throttle.burstLimit,
      },
    };
    if (route) cfnStage.node.addDependency(route);
    Validations.of(this.api).acknowledge({
      id: "AwsSolutions::AwsSolutions-APIG4",
      reason:
        "The platform signs deliveries with HTTP Basic auth, which the ingest function checks in constant time before anything else.",
    });
    const base = domainName ? `https://${props.domain?.name}` : this.stage.url.replace(/\/$/, "");
    this.webhookUrl = `${base}${path}`;
    const throttled = new MetricFilter(this, "Throttled", {
      logGroup: this.accessLogs,
      filterPattern: FilterPattern.stringValue("$.status", "=", "429"),
      metricNamespace: METRICS_NAMESPACE,
      metricName: THROTTLED_REQUESTS_METRIC,
      metricValue: "1",
    });
    this.throttledRequests = throttled.metric({ statistic: "Sum", period: Duration.minutes(1) });
  }
}
