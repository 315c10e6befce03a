import { GetSecretValueCommand, type SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { ENGLISH } from "@webhook-backend/stream/parse";
import { type ImportApiKeys, importApiKeysSchema } from "../contracts/secrets";
import { ConfigurationError } from "../platform/errors";

/** The environment variable that holds the import settings locally (as `RECORDING_API_KEYS` holds the recorder's keys). */
export const IMPORT_API_KEYS_ENV = "IMPORT_API_KEYS";

/**
 * Where the apps' import settings are: `IMPORT_API_KEYS` (the local stack's way), or the deployed
 * stack's import secret, which no function may read (only the operator's `npx webhook import`).
 * Never a command-line value: a key typed as a flag stays in the shell's history.
 */
export type ImportKeySource =
  | { kind: "env"; value: string | undefined }
  | { kind: "secret"; secretId: string };

/** One app's import address and API key. */
export interface ImportSettings {
  url: string;
  apiKey: string;
}

/** The settings of every app, parsed by their contract; a malformed value names its paths, never a key. */
function parse(value: unknown, where: string): ImportApiKeys {
  const parsed = importApiKeysSchema.safeParse(value, ENGLISH);
  if (!parsed.success)
    throw new ConfigurationError(
      `${where} is not {"<appId>":{"url":"<import_url>","apiKey":"<key>"}}: ${parsed.error.issues
        .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
        .join("; ")}`,
    );
  return parsed.data;
}

function json(text: string, where: string, hint = ""): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ConfigurationError(`${where} is not JSON${hint}`);
  }
}

/**
 * The import address and API key of `app`, from its source (the secret read once, with the
 * operator's credentials).
 *
 * @example const { url, apiKey } = await importSettingsFor("app1", { kind: "env", value: process.env.IMPORT_API_KEYS }, () => new SecretsManagerClient({}))
 * @throws ConfigurationError when there are none for the app, or they are malformed
 */
export async function importSettingsFor(
  app: string,
  source: ImportKeySource,
  secrets: () => SecretsManagerClient,
): Promise<ImportSettings> {
  let all: ImportApiKeys;
  if (source.kind === "env") {
    if (!source.value?.trim())
      throw new ConfigurationError(
        `no import settings: set ${IMPORT_API_KEYS_ENV}='{"${app}":{"url":"https://<app host>/v3.0/data_import","apiKey":"…"}}' (or use --stack with the stack's import secret)`,
      );
    all = parse(json(source.value, IMPORT_API_KEYS_ENV), IMPORT_API_KEYS_ENV);
  } else {
    const out = await secrets().send(new GetSecretValueCommand({ SecretId: source.secretId }));
    const where = `the import secret (${source.secretId})`;
    const hint = `: set it with aws secretsmanager put-secret-value --secret-id ${source.secretId} --secret-string '{"${app}":{"url":"https://<app host>/v3.0/data_import","apiKey":"…"}}'`;
    all = parse(json(out.SecretString ?? "", where, hint), where);
  }
  const settings = all[app];
  if (!settings)
    throw new ConfigurationError(
      `the import settings (${source.kind === "env" ? IMPORT_API_KEYS_ENV : "the import secret"}) have none for app ${app}`,
    );
  return settings;
}
