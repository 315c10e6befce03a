import type { TestProject } from "vitest/node";
import { type RunningEmulator, startDynamoDbLocal, startFauxqsProcess } from "../tools/local/emulators";

declare module "vitest" {
  export interface ProvidedContext {
    fauxqsEndpoint: string;
    dynamoEndpoint: string;
  }
}

/**
 * Starts the real emulators once for the whole run, on free ports, in memory, each in a process of
 * its own (fauxqs too: served from vitest's main process, its work delayed the workers' reports).
 */
export default async function setup(project: TestProject) {
  const started: RunningEmulator[] = [];
  const [fauxqs, dynamo] = await Promise.all([startFauxqsProcess(), startDynamoDbLocal()]);
  started.push(fauxqs, dynamo);
  // The e2e files start stacks of their own, each with its DynamoDB Local: two dozen JVM starts a
  // run (eleven in the Ctrl-C file alone). On the quick compiler alone and the serial collector a
  // JVM is ready in about half the time on two busy cores, and a short-lived database under a
  // test's load needs no more. Set after the shared one started, which the integration tests use
  // for the whole run and which keeps the JVM's defaults; the workers inherit it (issue #42, item 11).
  process.env.JAVA_TOOL_OPTIONS ??= "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";
  project.provide("fauxqsEndpoint", fauxqs.endpoint);
  project.provide("dynamoEndpoint", dynamo.endpoint);
  return async () => {
    await Promise.all(started.map((e) => e.stop()));
  };
}
