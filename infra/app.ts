import { App, Tags, Validations } from "aws-cdk-lib";
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from "aws-cdk-lib/cx-api";
import { AwsSolutionsChecks, ServerlessChecks } from "cdk-nag";
import { readDeploymentConfig } from "./config";
import { alarmProblems } from "./production-config";
import { WebhookBackendStack } from "./stack";

/** Builds the CDK app: one stack per stage, checked by cdk-nag's AwsSolutions and Serverless packs. */
export function buildApp(app = new App()): { app: App; stack: WebhookBackendStack } {
  const config = readDeploymentConfig(app.node.getAllContext());
  // Never silently nowhere (#60): a deployment names where its alarms go, or says none.
  const alarms = alarmProblems(config);
  if (alarms.length) throw new Error(`invalid CDK context: ${alarms.join("; ")}`);
  // The access-log bucket admits S3's log delivery by its bucket policy, not the legacy
  // LogDeliveryWrite ACL (its ACLs are off: DataBucket). Set before the stack is made.
  app.node.setContext(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
  const stack = new WebhookBackendStack(app, `WebhookBackend-${config.stage}`, {
    config,
    description: "Receives the chat platform's webhooks, projects them into DynamoDB and archives them in S3",
    // Environment-agnostic: every ARN and service name takes the account and region of the
    // deployment (AWS::Region, AWS::AccountId), never those the CLI had when it synthesized (its
    // default is us-east-1), so a template or a cdk.out deploys to any region as it is. Nothing
    // here looks anything up in an account.
  });
  // Not on the dashboard nor on provisioned mode's scalable targets: cfn-lint's schema refuses
  // Tags on AWS::CloudWatch::Dashboard and AWS::ApplicationAutoScaling::ScalableTarget in
  // us-east-1 and other regions (E3002).
  const tagging = {
    excludeResourceTypes: ["AWS::CloudWatch::Dashboard", "AWS::ApplicationAutoScaling::ScalableTarget"],
  };
  Tags.of(stack).add("application", "webhook-backend", tagging);
  Tags.of(stack).add("stage", config.stage, tagging);
  if (!process.env.NO_NAG)
    Validations.of(app).addPlugins(
      new AwsSolutionsChecks(app, { verbose: true }),
      new ServerlessChecks(app, { verbose: true }),
    );
  return { app, stack };
}

if (process.argv[1]?.endsWith("app.ts")) buildApp();
