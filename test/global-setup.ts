import type { TestProject } from "vitest/node";
import { type RunningEmulator, startDynamoDbLocal, startFauxqsEmulator } from "../tools/local/emulators";

declare module "vitest" {
  export interface ProvidedContext {
    fauxqsEndpoint: string;
    dynamoEndpoint: string;
  }
}

/** Starts the real emulators once for the whole run, on free ports, in memory. */
export default async function setup(project: TestProject) {
  const started: RunningEmulator[] = [];
  const [fauxqs, dynamo] = await Promise.all([startFauxqsEmulator(), startDynamoDbLocal()]);
  started.push(fauxqs, dynamo);
  project.provide("fauxqsEndpoint", fauxqs.endpoint);
  project.provide("dynamoEndpoint", dynamo.endpoint);
  return async () => {
    await Promise.all(started.map((e) => e.stop()));
  };
}
