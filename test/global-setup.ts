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
  project.provide("fauxqsEndpoint", fauxqs.endpoint);
  project.provide("dynamoEndpoint", dynamo.endpoint);
  return async () => {
    await Promise.all(started.map((e) => e.stop()));
  };
}
