import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
} from "@aws-sdk/client-secrets-manager";

/**
 * A Secrets Manager client that keeps one secret in memory, answering GetSecretValue (counted)
 * and PutSecretValue. There is no Secrets Manager emulator in the local stack, so this stub stands
 * in for the service (the one client replaced in these tests): for the ingest's cache and for a
 * rotation's writes.
 */
export function secretsStub(initial: object) {
  const state = { value: JSON.stringify(initial), reads: 0, puts: 0 };
  const client = new SecretsManagerClient({
    region: "us-east-1",
    credentials: { accessKeyId: "x", secretAccessKey: "x" },
  });
  client.middlewareStack.add(
    (_next, context) => async (args) => {
      if (context.commandName === GetSecretValueCommand.name) {
        state.reads++;
        return { output: { SecretString: state.value, $metadata: {} }, response: {} };
      }
      if (context.commandName === PutSecretValueCommand.name) {
        state.value = String((args.input as { SecretString?: string }).SecretString);
        state.puts++;
        return { output: { $metadata: {} }, response: {} };
      }
      throw new Error(`unexpected ${context.commandName}`);
    },
    { step: "initialize", name: "answerFromMemory" },
  );
  return { client, state };
}
