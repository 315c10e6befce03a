import { CloudFormationClient, DescribeStacksCommand } from "@aws-sdk/client-cloudformation";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
} from "@aws-sdk/client-secrets-manager";
import * as z from "zod/mini";
import type { CredentialStore } from "../../shared/apps/rotate";
import type { WebhookCredential } from "../../shared/contracts/secrets";
import { basicAuthorization, parseCredentialList } from "../../shared/ingest/credentials";
import { UserFacingError } from "../cli/program";
import { clientsFor, emulatorClients } from "../local/clients";
import { credentialsFilePath, fileCredentialStore } from "../local/credentials-store";
import { localAppsTableName } from "../local/provision";
import { readStackInfo, stateDir } from "../local/state";

/** The management API's address and credentials (never from a command's arguments, never logged). */
export interface ManagementConfig {
  url: string;
  key: string;
  secret: string;
}

/** What `connect` needs of a deployment: where deliveries go, with which credential, and its apps table. */
export interface Deployment {
  kind: "local" | "aws";
  /** Names our webhook on the platform (`webhook-backend-<name>`). */
  name: string;
  webhookUrl: string;
  /** The credential new and updated webhooks deliver with: the newest the deployment accepts. */
  credential: { username: string; password: string };
  appsTable: string;
  dynamo: DynamoDBClient;
  management: () => Promise<ManagementConfig>;
  /** The credentials the deployment accepts: the local stack's file, or the credentials secret. */
  credentialStore: CredentialStore;
  destroy(): void;
}

/** The fixed names tools outside the project can set too. */
export const MANAGEMENT_ENV = {
  url: "PLATFORM_MANAGEMENT_URL",
  key: "PLATFORM_MANAGEMENT_KEY",
  secret: "PLATFORM_MANAGEMENT_SECRET",
} as const;

const managementSecretSchema = z.object({
  url: z.string().check(z.minLength(1)),
  key: z.string().check(z.minLength(1)),
  secret: z.string().check(z.minLength(1)),
});

/** The management API from the environment (the local stack's way). */
export function managementFromEnv(env: NodeJS.ProcessEnv = process.env): ManagementConfig {
  const [url, key, secret] = [
    env[MANAGEMENT_ENV.url],
    env[MANAGEMENT_ENV.key],
    env[MANAGEMENT_ENV.secret],
  ].map((v) => v?.trim() ?? "");
  const missing = Object.values(MANAGEMENT_ENV).filter((_, i) => ![url, key, secret][i]);
  if (missing.length)
    throw new UserFacingError(
      `no management API configuration: set ${missing.join(", ")} (the platform's operator issues the key and secret)`,
    );
  return { url: url ?? "", key: key ?? "", secret: secret ?? "" };
}

async function secretJson(secrets: SecretsManagerClient, secretId: string, what: string): Promise<unknown> {
  const out = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
  try {
    return JSON.parse(out.SecretString ?? "");
  } catch {
    throw new UserFacingError(`the ${what} secret is not JSON`);
  }
}

/**
 * The running local stack (`--state-dir`) or a deployed stack (`--stack`, its outputs and secrets).
 *
 * @example const deployment = await resolveDeployment({ stack: "WebhookBackend-prod" })
 */
export async function resolveDeployment(options: { stack?: string; stateDir?: string }): Promise<Deployment> {
  if (!options.stack) {
    const dir = stateDir(options.stateDir);
    const info = readStackInfo(dir);
    const clients = emulatorClients(info.endpoints);
    const store = fileCredentialStore(credentialsFilePath(dir));
    // The newest credential the stack accepts (a rotation adds the new one last).
    const newest = (await store.list().catch(() => [info.credentials])).at(-1) ?? info.credentials;
    return {
      kind: "local",
      name: "local",
      webhookUrl: info.webhookUrl,
      credential: { username: newest.username, password: newest.password },
      credentialStore: store,
      appsTable: info.appsTable ?? localAppsTableName("local"),
      dynamo: clients.dynamo,
      management: async () => managementFromEnv(),
      destroy: () => clients.destroy(),
    };
  }
  const cfn = new CloudFormationClient({});
  const out = await cfn.send(new DescribeStacksCommand({ StackName: options.stack }));
  cfn.destroy();
  const outputs = Object.fromEntries(
    (out.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue ?? ""]),
  );
  const missing = ["WebhookUrl", "CredentialsSecret", "AppsTable", "ManagementSecret"].filter(
    (k) => !outputs[k],
  );
  if (missing.length)
    throw new UserFacingError(
      `stack ${options.stack} has no ${missing.join(", ")} output: deploy this version first`,
    );
  const secrets = new SecretsManagerClient({});
  const credentials = parseCredentialList(
    await secretJson(secrets, outputs.CredentialsSecret ?? "", "credentials"),
  );
  const newest = credentials.at(-1);
  if (!newest) throw new UserFacingError("the credentials secret holds no credential");
  const clients = clientsFor({ endpoint: undefined, dynamoEndpoint: undefined });
  return {
    kind: "aws",
    name: options.stack,
    webhookUrl: outputs.WebhookUrl ?? "",
    credential: { username: newest.username, password: newest.password },
    credentialStore: secretCredentialStore(secrets, outputs.CredentialsSecret ?? ""),
    appsTable: outputs.AppsTable ?? "",
    dynamo: clients.dynamo,
    management: async () => {
      const parsed = managementSecretSchema.safeParse(
        await secretJson(secrets, outputs.ManagementSecret ?? "", "management"),
      );
      if (!parsed.success)
        throw new UserFacingError(
          `the management secret (${outputs.ManagementSecret}) must hold {"url":"<management_url>","key":"…","secret":"…"}: set it with aws secretsmanager put-secret-value`,
        );
      return parsed.data;
    },
    destroy: () => {
      clients.destroy();
      secrets.destroy();
    },
  };
}

/**
 * The credentials secret as a store: read whole, written whole as a new version (the ingest's
 * Powertools cache reads it within a minute, and at once after a miss).
 *
 * @example await secretCredentialStore(new SecretsManagerClient({}), secretArn).list()
 */
export function secretCredentialStore(secrets: SecretsManagerClient, secretId: string): CredentialStore {
  return {
    list: async () => parseCredentialList(await secretJson(secrets, secretId, "credentials")),
    write: async (credentials) => {
      await secrets.send(
        new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify({ credentials }) }),
      );
    },
  };
}

/**
 * Whether the ingest accepts a credential (`rotate-credentials`' probe): an empty body sent with
 * it is refused as a bad request (400) once authenticated, and 401 before; nothing is stored
 * either way. `fetchImpl`: the writers model's in-process ingest (issue #50).
 *
 * @example await ingestProbe("https://…/webhook")({ username: "u", password: "p" }) // true
 */
export function ingestProbe(webhookUrl: string, fetchImpl: typeof fetch = fetch) {
  return async (credential: WebhookCredential): Promise<boolean> => {
    const response = await fetchImpl(webhookUrl, {
      method: "POST",
      headers: {
        authorization: basicAuthorization(credential.username, credential.password),
        "content-type": "application/json",
      },
      body: "",
    }).catch(() => undefined);
    return response !== undefined && response.status !== 401 && response.status < 500;
  };
}
