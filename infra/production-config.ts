import * as z from "zod/mini";
import { WEBHOOK_PATH_TOKEN } from "../shared/platform/webhook-path";
import { arn, wholeNumber } from "./config-schema";

const id = (what: string) => z.string(`expected the ${what}`).check(z.minLength(1, `expected the ${what}`));

/**
 * The context keys of a production deployment (#60): the webhook's secret path, where the alarms
 * go, what a stack deletion leaves, the ingest's reserved concurrency. Spread into the
 * deployment's schema (`infra/config.ts`); docs/deploy.md lists them.
 */
export const PRODUCTION_KEYS = {
  /**
   * The webhook URL's secret path segment (`/webhook/<token>`): a request to another path is a
   * 404 of API Gateway that invokes nothing. Unset: `/webhook`, and synth warns.
   */
  webhookPathToken: z.optional(
    z
      .string()
      .check(
        z.regex(
          WEBHOOK_PATH_TOKEN,
          "expected 16 to 128 letters, digits, - or _ (e.g. the output of openssl rand -hex 16)",
        ),
      ),
  ),
  /**
   * `"none"`: the deployer accepts that the alarms reach nobody when no destination is given
   * (`cdk.json` says so, and synth warns). Without a destination and without it, synth refuses.
   */
  alarms: z.optional(z.enum(["none"], 'expected "none"')),
  /** A topic of the deployer's that every alarm also notifies (alarm and OK). */
  alarmTopicArn: z.optional(arn("sns")),
  /** AWS Chatbot to a Slack channel: `{"workspaceId":"T…","channelId":"C…"}` (the workspace authorised in the Chatbot console first). */
  alarmSlack: z.optional(
    z.strictObject({ workspaceId: id("Slack workspace id"), channelId: id("Slack channel id") }),
  ),
  /** AWS Chatbot to a Microsoft Teams channel: `{"teamId":"…","tenantId":"…","channelId":"…"}`. */
  alarmTeams: z.optional(
    z.strictObject({
      teamId: id("Teams team id"),
      tenantId: id("Teams tenant id"),
      channelId: id("Teams channel id"),
    }),
  ),
  /**
   * A custom domain for the webhook URL (apps keep it across a rebuild or another region): the
   * host name, and its ACM certificate in the stack's region. The execute-api URL is then off.
   */
  customDomainName: z.optional(
    z
      .string()
      .check(
        z.regex(
          /^(?=.{1,253}$)([a-z0-9-]{1,63}\.)+[a-z]{2,63}$/,
          "expected a host name (webhooks.example.com)",
        ),
      ),
  ),
  customDomainCertificateArn: z.optional(arn("acm")),
  /**
   * Deploy onto the tables and data bucket a deleted stack left, by name (with `cdk deploy
   * --import-existing-resources`, on a new stack only): `{"tables":{"Sessions":"<name>",…},"dataBucket":"<name>"}`,
   * the table ids `Sessions`, `Groups`, `Presence`, `Memberships`, `Apps`, `Activity`.
   */
  existingResources: z.optional(
    z.strictObject({
      tables: z.optional(
        z.partialRecord(
          z.enum(["Sessions", "Groups", "Presence", "Memberships", "Apps", "Activity"]),
          z.string().check(z.regex(/^[A-Za-z0-9_.-]{3,255}$/, "expected a DynamoDB table name")),
        ),
      ),
      dataBucket: z.optional(
        z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "expected an S3 bucket name")),
      ),
    }),
  ),
  /**
   * A copy in another region, to rebuild there (docs/deploy.md, "Another region"): the raw
   * archive, quarantine and import records replicated to `replicaBucketName` (a versioned bucket
   * of yours in `replicaRegion`), and the generated secrets replicated to `replicaRegion`.
   */
  replicaRegion: z.optional(
    z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, "expected a region (eu-central-1)")),
  ),
  replicaBucketName: z.optional(
    z.string().check(z.regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "expected an S3 bucket name")),
  ),
  /**
   * Provisioned mode: the units every table and index starts with, at creation or a switch from
   * on demand (default: the minimum). Set to the peak on-demand consumption before a live switch.
   */
  capacityInitialWriteUnits: z.optional(wholeNumber(1, 40_000)),
  capacityInitialReadUnits: z.optional(wholeNumber(1, 40_000)),
  /** DynamoDB deletion protection on every table: `false` only to delete a stage for good. */
  tableDeletionProtection: z._default(z.boolean(), true),
  /**
   * Concurrency reserved for the ingest (the one function whose throttling loses deliveries):
   * unset, nothing reserved. Lambda keeps 100 of the account's concurrency unreserved.
   */
  ingestReservedConcurrency: z.optional(wholeNumber(1, 10_000)),
};

/** The copy needs its region and its bucket. */
export function replicaProblems(config: { replicaRegion?: string; replicaBucketName?: string }): string[] {
  return [config.replicaRegion, config.replicaBucketName].filter(Boolean).length === 1
    ? ["replicaRegion and replicaBucketName: give both (a versioned bucket of yours in that region)"]
    : [];
}

/** The custom domain the configuration gives, with its certificate. */
export function customDomain(config: {
  customDomainName?: string;
  customDomainCertificateArn?: string;
}): { name: string; certificateArn: string } | undefined {
  const { customDomainName: name, customDomainCertificateArn: certificateArn } = config;
  return name && certificateArn ? { name, certificateArn } : undefined;
}

/** A custom domain needs its certificate, and a certificate its domain. */
export function domainProblems(config: {
  customDomainName?: string;
  customDomainCertificateArn?: string;
}): string[] {
  const given = [config.customDomainName, config.customDomainCertificateArn].filter(Boolean).length;
  return given === 1
    ? [
        "customDomainName and customDomainCertificateArn: give both (the host name, and its ACM certificate in the stack's region)",
      ]
    : [];
}

/** The resources a deleted stack left, to deploy onto by name. */
export interface ExistingResources {
  tables?: Partial<Record<string, string>>;
  dataBucket?: string;
}

/** Where the alarms go: the destinations a configuration gives. */
export interface AlarmDestinations {
  alarmEmail?: string;
  alarmTopicArn?: string;
  alarmSlack?: { workspaceId: string; channelId: string };
  alarmTeams?: { teamId: string; tenantId: string; channelId: string };
  alarms?: "none";
}

/**
 * The destinations given, by key.
 *
 * @example alarmDestinationKeys({ alarmEmail: "ops@example.com" }) // ["alarmEmail"]
 */
export function alarmDestinationKeys(config: AlarmDestinations): string[] {
  return (["alarmEmail", "alarmTopicArn", "alarmSlack", "alarmTeams"] as const).filter(
    (key) => config[key] !== undefined,
  );
}

/**
 * A deployment states where its alarms go, or that they go nowhere (`alarms: "none"`): never
 * silently nowhere.
 */
export function alarmProblems(config: AlarmDestinations): string[] {
  if (alarmDestinationKeys(config).length > 0 || config.alarms === "none") return [];
  return [
    'alarms: say where the alarms go (alarmEmail, alarmTopicArn, alarmSlack or alarmTeams), or that they go nowhere (-c alarms=none): docs/deploy.md "Where the alarms go"',
  ];
}
