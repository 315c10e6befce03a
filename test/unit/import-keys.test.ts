import { describe, expect, it } from "vitest";
import { importSettingsFor } from "../../shared/imports/import-keys";
import { ConfigurationError } from "../../shared/platform/errors";
import { secretsStub } from "../support/secrets";

// Where an import's address and key come from (#43): IMPORT_API_KEYS locally, the stack's import
// secret with --stack (Secrets Manager has no emulator: the one client replaced, by a stub), never
// a flag; a malformed value names its paths, never a key.

const KEY = "k-7f3a9c";
const settings = { app1: { url: "https://app1.api-eu.example.io/v3.0/data_import", apiKey: KEY } };
const env = (value: unknown) => ({ kind: "env" as const, value: JSON.stringify(value) });
const noSecrets = () => {
  throw new Error("no Secrets Manager locally");
};

describe("the import settings", () => {
  it("reads an app's address and key from IMPORT_API_KEYS", async () => {
    expect(await importSettingsFor("app1", env(settings), noSecrets)).toEqual(settings.app1);
  });

  it("refuses what is missing or malformed with the paths at fault and never the key", async () => {
    const refused = async (value: { kind: "env"; value: string | undefined }, app = "app1") => {
      const error = await importSettingsFor(app, value, noSecrets).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).not.toContain(KEY);
      return (error as Error).message;
    };
    expect(await refused({ kind: "env", value: undefined })).toContain("IMPORT_API_KEYS=");
    expect(await refused({ kind: "env", value: "{not json" })).toContain("IMPORT_API_KEYS is not JSON");
    expect(await refused(env(settings), "app2")).toContain("none for app app2");
    // Plain http to another machine would carry the key in the clear (spec section 1: HTTPS only).
    expect(
      await refused(env({ app1: { ...settings.app1, url: "http://app1.example.io/v3.0/data_import" } })),
    ).toContain("app1.url: expected an https:// URL");
    expect(await refused(env({ app1: { url: settings.app1.url } }))).toContain("app1.apiKey");
  });

  it("takes plain http to this machine only (the simulator)", async () => {
    const local = { app1: { url: "http://127.0.0.1:8123/apps/app1/v3.0/data_import", apiKey: KEY } };
    expect((await importSettingsFor("app1", env(local), noSecrets)).url).toBe(local.app1.url);
  });

  it("reads the stack's import secret once, and says how to set it when it holds no JSON", async () => {
    const secret = secretsStub(settings);
    const source = { kind: "secret" as const, secretId: "arn:aws:secretsmanager:eu-west-1:1:secret:import" };
    expect(await importSettingsFor("app1", source, () => secret.client)).toEqual(settings.app1);
    expect(secret.state.reads).toBe(1);
    secret.state.value = "generated-by-cloudformation";
    await expect(importSettingsFor("app1", source, () => secret.client)).rejects.toThrow(
      /is not JSON: set it with aws secretsmanager put-secret-value --secret-id arn:.*import/,
    );
  });
});
