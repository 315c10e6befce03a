/**
 * `npx webhook verify [--app <appId>] [--stack <name>] [--wait-seconds <n>] [--json]`: proves a
 * deployment (or the running local stack) works end to end with one delivery: accepted by the
 * ingest with a credential, its archived line, its table row, its stream message (a temporary
 * listener), its figure after a rollup (`tools/ops/verify.ts`). Exit 0 only when every step held.
 */
import { randomUUID } from "node:crypto";
import { DeleteMessageBatchCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { Command } from "commander";
import { rollupDays } from "../../shared/analytics/rollup";
import { basicAuthorization } from "../../shared/ingest/credentials";
import { projectionStores } from "../../shared/projector/stores";
import { parseStreamMessage } from "../../shared/stream/envelope";
import { filterPolicyOf } from "../../shared/stream/subscribers";
import { activityStoreFor, archiveLeaseFor, sqlEngineFor, userSetsFor } from "../analytics/engines";
import { integer, runProgram, UserFacingError, withTarget } from "../cli/program";
import { resolveDeployment } from "../ops/app-connection";
import { openListener } from "../ops/listen";
import { traceEvent } from "../ops/trace";
import { verifyDeployment, verifyLines } from "../ops/verify";
import { template } from "../simulate/templates";
import { resolveTarget } from "../target";

interface VerifyOptions {
  app: string;
  stack?: string;
  stateDir?: string;
  waitSeconds?: number;
  json?: boolean;
}

/**
 * How long after the listener's switch is on before the delivery: the projector reads the switch
 * at most every 60 s per container deployed (`STREAM_SWITCH_CACHE_SECONDS`), every second locally.
 */
const SWITCH_WAIT_MS = { aws: 61_000, local: 2_000 } as const;

/** A `group_created` of a group only this run creates, dated now, from the simulator's template. */
function verifyBody(app: string, runId: string, now: number): string {
  const event = template("group_created");
  const guid = `verify-${runId}`;
  event.appId = app;
  event.data.group = {
    ...event.data.group,
    guid,
    name: "webhook verify",
    conversationId: `group_${guid}`,
    createdAt: Math.floor(now / 1000),
    joinedAt: Math.floor(now / 1000),
  };
  return JSON.stringify(event);
}

async function run(o: VerifyOptions): Promise<void> {
  const target = await resolveTarget({ stack: o.stack, stateDir: o.stateDir });
  const deployment = await resolveDeployment({ stack: o.stack, stateDir: o.stateDir });
  try {
    if (!target.bucket || !target.stream || !target.appsTable || !target.queues)
      throw new UserFacingError(
        "the target lacks its bucket, stream or queues: deploy (or start) this version",
      );
    const runId = randomUUID().slice(0, 8);
    const listener = await openListener(
      target,
      { topicArn: target.stream.topicArn, appsTable: target.appsTable },
      filterPolicyOf({ name: "verify", apps: [o.app] }),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, SWITCH_WAIT_MS[target.kind]));
      const stores = projectionStores(target.dynamo, target.tables);
      const store = activityStoreFor(target);
      const report = await verifyDeployment(
        {
          async deliver() {
            const response = await fetch(deployment.webhookUrl, {
              method: "POST",
              headers: {
                authorization: basicAuthorization(
                  deployment.credential.username,
                  deployment.credential.password,
                ),
                "content-type": "application/json",
              },
              body: verifyBody(o.app, runId, Date.now()),
            });
            const answer: unknown = await response.json().catch(() => ({}));
            const eventId =
              answer && typeof answer === "object" && "eventId" in answer ? answer.eventId : undefined;
            if (!response.ok || typeof eventId !== "string")
              throw new Error(
                `${deployment.webhookUrl} answered ${response.status} ${JSON.stringify(answer)}`,
              );
            return eventId;
          },
          trace: (eventId) =>
            traceEvent(target, target.bucket ?? "", target.queues?.events.deadLetterUrl, stores, eventId, {
              appId: o.app,
              receivedAt: Date.now(),
            }),
          async received() {
            const out = await target.sqs.send(
              new ReceiveMessageCommand({
                QueueUrl: listener.queueUrl,
                MaxNumberOfMessages: 10,
                WaitTimeSeconds: 1,
              }),
            );
            const messages = out.Messages ?? [];
            if (messages.length)
              await target.sqs.send(
                new DeleteMessageBatchCommand({
                  QueueUrl: listener.queueUrl,
                  Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
                }),
              );
            return messages.map((m) => parseStreamMessage(m.Body ?? "").id);
          },
          async rollup(app, day) {
            const report = await rollupDays(
              [day],
              {
                engine: sqlEngineFor(target),
                store,
                now: Date.now,
                graceMs: 2 * 3_600_000,
                userSets: userSetsFor(target),
                archiveLock: archiveLeaseFor(target),
              },
              { app },
            );
            const failure = report.failures[0];
            if (failure)
              throw failure.error instanceof Error ? failure.error : new Error(String(failure.error));
          },
          groupsCreated: async (app, day) => (await store.day(app, day))?.figures.groups_created,
          now: Date.now,
          sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
          waitMs: (o.waitSeconds ?? (target.kind === "aws" ? 120 : 60)) * 1000,
          pollMs: 1_000,
        },
        o.app,
      );
      if (o.json) console.log(JSON.stringify(report, null, 2));
      else for (const line of verifyLines(report)) console.log(line);
      if (!report.ok) process.exitCode = 1;
    } finally {
      await listener.close();
    }
  } finally {
    target.destroy();
    deployment.destroy();
  }
}

const program = withTarget(
  new Command("verify")
    .description(
      "Prove the deployment (or the local stack) works end to end: one delivery, its archived line, table row, stream message and figure",
    )
    .option(
      "--app <appId>",
      "the app the delivery is of (with restrictApps: one the deployment allows)",
      "webhook-verify",
    )
    .option(
      "--wait-seconds <n>",
      "how long each step may wait (default: 120 deployed, 60 locally)",
      integer(1, 3600),
    )
    .option("--json", "the report as JSON"),
).action((o: VerifyOptions) => run(o));

process.exitCode = await runProgram(program, process.argv.slice(2));
