import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { buildApp } from "../../../infra/app";
import { prebundleStackFunctions } from "../prebundle";

/** A resource of a synthesized template, as CloudFormation reads it. */
export interface TemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

/** A synthesized template as JSON: what the checks read, and what a test copies to inject a defect. */
export interface TemplateJson {
  Resources: Record<string, TemplateResource>;
}

/**
 * Every option that adds a resource or a grant turned on: declared stream subscribers (one raw,
 * one wrapped), the reconciler, the archive's retention (the sweep's deletes), imported secrets
 * with a customer-managed key, a restricted app list (its seed's custom resources). One synth
 * (cdk-nag runs in it) serves every check of `test/infra/deployed.test.ts`.
 */
export const EVERY_OPTION = {
  stage: "deployed",
  alarmEmail: "ops@example.com",
  allowedAppIds: ["app1", "app2"],
  streamSubscribers: JSON.stringify([
    { name: "crm", apps: ["app1"], triggers: ["group:*", "message_sent"] },
    { name: "audit", rawDelivery: false },
  ]),
  retainArchiveDays: "400",
  credentialsSecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:webhook-credentials-AbCdEf",
  recordingApiKeysSecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:recording-keys-AbCdEf",
  secretsKmsKeyArn: "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
  reconcileEveryMinutes: "60",
  reconcileApps: JSON.stringify({ app1: "us" }),
} as const;

/** The template of a stack synthesized with `context` (bundles prebuilt: a synth only copies them). */
export async function synthesizedTemplate(context: Record<string, unknown>): Promise<TemplateJson> {
  await prebundleStackFunctions();
  // As `cdk synth` runs the app on a machine without an AWS configuration: the CLI sets its
  // defaults, us-east-1 among them (#48 item 5: the template must not take them).
  const saved = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
  process.env.CDK_DEFAULT_ACCOUNT = CLI_DEFAULTS.account;
  process.env.CDK_DEFAULT_REGION = CLI_DEFAULTS.region;
  try {
    // As cdk.json says (#60): alarms go nowhere unless the context names where they go.
    const destinations = ["alarms", "alarmEmail", "alarmTopicArn", "alarmSlack", "alarmTeams"];
    const withAlarms = destinations.some((key) => key in context) ? context : { alarms: "none", ...context };
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), "cdk-deployed-")), context: withAlarms });
    const { stack } = buildApp(app);
    app.synth();
    return Template.fromStack(stack).toJSON() as TemplateJson;
  } finally {
    for (const [name, value] of [
      ["CDK_DEFAULT_ACCOUNT", saved.account],
      ["CDK_DEFAULT_REGION", saved.region],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  }
}

/** What the CDK CLI puts in the environment of the app it synthesizes, when nothing configures it. */
export const CLI_DEFAULTS = { account: "111122223333", region: "us-east-1" } as const;

/** A copy of a template to inject a defect into (the checks must then find it). */
export function copyOf(template: TemplateJson): TemplateJson {
  return structuredClone(template);
}

/** The resources of a type, by logical id. */
export function resourcesOf(template: TemplateJson, type: string): Array<[string, TemplateResource]> {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}
