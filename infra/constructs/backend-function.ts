import { join, relative } from "node:path";
import {
  AssetHashType,
  DockerImage,
  type Duration,
  type ILocalBundling,
  RemovalPolicy,
  Validations,
} from "aws-cdk-lib";
import {
  ApplicationLogLevel,
  Architecture,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from "aws-cdk-lib/aws-lambda";
import { LogGroup, type RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { ServiceName } from "../../shared/platform/outcomes";
import { type BundleOptions, bundleFunction, PROJECT_ROOT } from "../bundling";

export interface BackendFunctionProps {
  /** Which function: its logs' and metrics' service name. */
  readonly service: ServiceName;
  /** The handler file (`functions/<name>/handler.ts`). */
  readonly entry: string;
  readonly description: string;
  /** MB. Also buys CPU: Lambda allocates it in proportion. */
  readonly memorySize: number;
  readonly timeout: Duration;
  /** From the function's environment builder (`shared/config/function-environment.ts`). */
  readonly environment: Record<string, string | undefined>;
  /** Retention of the function's own log group. */
  readonly logRetention: RetentionDays;
  /**
   * How it is invoked: `api` and `sqs` are synchronous or queue-backed (failures stay in the queue);
   * `schedule` is asynchronous, and idempotent: a failed run is superseded by the next.
   * @default "sqs"
   */
  readonly invokedBy?: "api" | "sqs" | "schedule";
  /**
   * Whether X-Ray records the function's invocations (traces are priced per trace: a function
   * invoked once per event pays it per event).
   * @default true
   */
  readonly tracing?: boolean;
  /**
   * Lambda's own lines: at INFO, a start and a report line per invocation (~500 bytes of logs);
   * at WARN, only what went wrong. CloudWatch's Duration, Errors and Throttles metrics are kept
   * either way.
   * @default SystemLogLevel.INFO
   */
  readonly systemLogLevel?: SystemLogLevel;
  /** A directory copied into the bundle (`to`, beside the handler): files the code reads at run time. */
  readonly bundledFiles?: { from: string; to: string };
  /**
   * Source maps in the bundle and `NODE_OPTIONS=--enable-source-maps`, so that a stack trace names
   * the TypeScript lines. Node reads them at import: ~17 ms of CPU at the ingest's cold start
   * (`bench:ingest`), worth it only for a function that logs stack traces.
   * @default true
   */
  readonly sourceMaps?: boolean;
}

/**
 * A function of this backend with the defaults every one shares: bundled locally by esbuild (no
 * Docker) with `bundleFunction` (minified, ESM, code splitting, source maps, AWS SDK included);
 * arm64 on the latest Node runtime; X-Ray
 * tracing; JSON logs (Powertools' lines as they are, Lambda's own filtered by level) in its own log
 * group with a retention period.
 */
export class BackendFunction extends Construct {
  public readonly function: LambdaFunction;
  public readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: BackendFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, "Logs", {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const sourceMaps = props.sourceMaps ?? true;
    this.function = new LambdaFunction(this, "Function", {
      code: bundledCode(props.entry, { copy: props.bundledFiles, sourceMaps }),
      handler: "index.handler",
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      tracing: (props.tracing ?? true) ? Tracing.ACTIVE : Tracing.PASS_THROUGH,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      // The same level as POWERTOOLS_LOG_LEVEL: Powertools follows Lambda's level when both are set.
      applicationLogLevelV2: ApplicationLogLevel.INFO,
      systemLogLevelV2: props.systemLogLevel ?? SystemLogLevel.INFO,
      environment: {
        ...(sourceMaps ? { NODE_OPTIONS: "--enable-source-maps" } : {}),
        POWERTOOLS_LOG_LEVEL: "INFO",
        POWERTOOLS_SERVICE_NAME: props.service,
        ...Object.fromEntries(
          Object.entries(props.environment).filter((e): e is [string, string] => e[1] !== undefined),
        ),
      },
    });
    this.acknowledgeSharedFindings(props.invokedBy ?? "sqs");
    if (props.invokedBy === "schedule") this.noAsyncRetries();
    if (props.tracing === false)
      Validations.of(this.function).acknowledge({
        id: "Serverless::Serverless-LambdaTracing",
        reason:
          "Invoked once per event: X-Ray's price per trace would be paid per event (bench:cost prices it). Its metrics, logs and the API's access log remain; the deployment can turn tracing on (ingestTracing).",
      });
  }

  /**
   * A schedule's function runs asynchronously: the rule's target has `retryAttempts: 0`, but that
   * is EventBridge's; Lambda's own asynchronous retries (two by default) would re-run a failed
   * pass (the rollup's Athena queries). None: the next tick supersedes a failed run.
   */
  private noAsyncRetries(): void {
    this.function.configureAsyncInvoke({ retryAttempts: 0 });
    Validations.of(this.function).acknowledge({
      id: "Serverless::Serverless-LambdaAsyncFailureDestination",
      reason:
        "Invoked by a schedule: a failed run is superseded by the next tick, which recomputes from the same sources; its failure is alarmed (Errors, and the function's failed outcome). There is no event to keep.",
    });
  }

  /** The cdk-nag findings every function of this backend shares, each with its reason. */
  private acknowledgeSharedFindings(invokedBy: "api" | "sqs" | "schedule"): void {
    const ack = (id: string, reason: string) => Validations.of(this.function).acknowledge({ id, reason });
    ack(
      "AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
      "AWSLambdaBasicExecutionRole only lets the function write its own CloudWatch logs.",
    );
    ack(
      "AwsSolutions::AwsSolutions-IAM5[Resource::*]",
      "X-Ray's PutTraceSegments and PutTelemetryRecords (tracing) have no resource-level permissions.",
    );
    ack(
      "Serverless::Serverless-LambdaDLQ",
      invokedBy === "schedule"
        ? "Invoked by a schedule: each run reconciles from the platform's current listing, so a failed run is superseded by the next one, and its failure is logged and counted (ReconciledUsers failed)."
        : "Invoked synchronously (API Gateway) or by an SQS event source whose queue has a DLQ; there are no asynchronous invocations to dead-letter.",
    );
    ack(
      "Serverless::Serverless-LambdaEventSourceMappingDestination",
      "SQS event sources do not take on-failure destinations: failed messages go back to the queue and, after maxReceiveCount, to its DLQ.",
    );
  }
}

/**
 * The function's code: `bundleFunction`'s output (esbuild, in this process: offline, no Docker),
 * hashed by its content, so that an unchanged bundle is not uploaded again. NodejsFunction is not
 * used: it bundles to a single `--outfile`, which rules out esbuild's code splitting.
 */
function bundledCode(entry: string, options: BundleOptions): Code {
  return Code.fromAsset(PROJECT_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: local bundling either succeeds or throws.
      image: DockerImage.fromRegistry("public.ecr.aws/sam/build-nodejs24.x"),
      local: new LocalBundling(relative(PROJECT_ROOT, entry), options),
    },
  });
}

/** `bundleFunction` as the CDK's local bundling. Its fields are part of the key the CDK caches bundles by. */
class LocalBundling implements ILocalBundling {
  constructor(
    readonly entry: string,
    readonly options: BundleOptions,
  ) {}

  tryBundle(outputDir: string): boolean {
    bundleFunction(join(PROJECT_ROOT, this.entry), outputDir, this.options);
    return true;
  }
}
