import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import { beforeAll } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import type { TableNames } from "../../shared/platform/tables";
import type { ProjectorDependencies } from "../../shared/projector/core";
import type { ProjectionStores } from "../../shared/projector/registry";
import { createProjectionTables, localTableNames } from "../../tools/local/provision";
import { createBucket, createQueue, testClients, uniqueName } from "./aws";

/**
 * The projector over the emulators, for an integration test file: its clients, a bucket and a
 * recordings queue of its own (made before its tests run), fresh projection tables on demand, the
 * projector's dependencies over given stores, and a silent logger and metrics for the handler.
 */
export function projectorOnEmulators(serviceName: string) {
  const clients = testClients();
  const { dynamo, s3, sqs } = clients;
  let bucket = "";
  let recordingsQueueUrl = "";
  beforeAll(async () => {
    bucket = await createBucket(s3, uniqueName("data"));
    recordingsQueueUrl = await createQueue(sqs, uniqueName("recordings"));
  });
  return {
    ...clients,
    /** The test file's bucket (set once its `beforeAll` ran). */
    get bucket() {
      return bucket;
    },
    silent: () => ({
      logger: new Logger({ serviceName, logLevel: "SILENT" }),
      metrics: new Metrics({ namespace: "Test", serviceName }),
    }),
    async tableSet(): Promise<TableNames> {
      const names = localTableNames(uniqueName("t"));
      await createProjectionTables(dynamo, names);
      return names;
    },
    depsFor: (stores: ProjectionStores): ProjectorDependencies => ({
      stores,
      dataStore: s3BlobStore(s3, bucket),
      recordingJobs: sqsMessageQueue(sqs, recordingsQueueUrl),
      now: () => 1_700_000_000_000,
    }),
  };
}
