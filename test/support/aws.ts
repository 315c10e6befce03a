import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, type S3Client } from "@aws-sdk/client-s3";
import type { SNSClient } from "@aws-sdk/client-sns";
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { inject } from "vitest";
import { emulatorClients } from "../../tools/local/clients";
import { LOCAL_REGION } from "../../tools/local/emulators";
import { localTableNames } from "../../tools/local/provision";
import type { LocalStackInfo } from "../../tools/local/state";

/** SDK clients pointed at the emulators started by the global setup (or at another fauxqs). */
export function testClients(endpoint = inject("fauxqsEndpoint")) {
  return emulatorClients({ aws: endpoint, dynamodb: inject("dynamoEndpoint") });
}

/**
 * A test's interleaving point in a client's requests: the function returned arms `run`, which then
 * runs once, just before the client's next command whose name matches `command` (another writer
 * between this one's read and its write).
 */
export function beforeCommand(
  client: DynamoDBClient | SQSClient | SNSClient,
  command: RegExp,
): (run: () => Promise<void>) => void {
  let armed: (() => Promise<void>) | undefined;
  // Every client's stack takes the same middleware; TypeScript sees three unrelated stacks.
  (client.middlewareStack as DynamoDBClient["middlewareStack"]).add(
    (next, context) => async (args) => {
      if (armed && command.test(context.commandName ?? "")) {
        const run = armed;
        armed = undefined;
        await run();
      }
      return next(args);
    },
    { step: "initialize", name: `before ${command.source}` },
  );
  return (run) => {
    armed = run;
  };
}

/** A name no other test uses, so tests can share one emulator. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

export async function createQueue(sqs: SQSClient, name: string, attributes: Record<string, string> = {}) {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!out.QueueUrl) throw new Error(`queue ${name} has no URL`);
  return out.QueueUrl;
}

export async function createBucket(s3: S3Client, name: string): Promise<string> {
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
}

/**
 * Records the `MessageGroupId` of every message the client sends (SendMessage and each entry of
 * SendMessageBatch), in order, as the SDK hands it to the wire. fauxqs accepts the group of a
 * standard queue and does not keep it (only FIFO queues return it), so a test of the fair queues'
 * grouping reads the request: the emulator is still the one that answers.
 */
export function recordMessageGroups(sqs: SQSClient): Array<string | undefined> {
  const groups: Array<string | undefined> = [];
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { MessageGroupId?: string; Entries?: Array<{ MessageGroupId?: string }> };
      if (context.commandName === "SendMessageCommand") groups.push(input.MessageGroupId);
      if (context.commandName === "SendMessageBatchCommand")
        groups.push(...(input.Entries ?? []).map((e) => e.MessageGroupId));
      return next(args);
    },
    { step: "initialize", name: "recordMessageGroups" },
  );
  return groups;
}

/**
 * Every message a queue holds now (its body and String attributes), received and deleted batch
 * by batch (a receive that finds nothing ends it).
 */
export async function drainQueue(
  sqs: SQSClient,
  queueUrl: string,
): Promise<Array<{ body: string; attributes: Record<string, string | undefined> }>> {
  const messages: Array<{ body: string; attributes: Record<string, string | undefined> }> = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) return messages;
    for (const m of Messages)
      messages.push({
        body: m.Body ?? "",
        attributes: Object.fromEntries(
          Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue]),
        ),
      });
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
      }),
    );
  }
}

/** Every message body a queue holds now (`drainQueue`). */
export const drainBodies = async (sqs: SQSClient, queueUrl: string): Promise<string[]> =>
  (await drainQueue(sqs, queueUrl)).map((m) => m.body);

/**
 * A local stack's state directory whose `stack.json` names the test's emulators and the given
 * resources (this process as the stack's pid): what a command run in its own process
 * (`webhook listen`, `replay`) reads as the running local stack.
 */
export function emulatorStackDir(parts: Partial<LocalStackInfo>): string {
  const dir = mkdtempSync(join(tmpdir(), "stack-"));
  const info: LocalStackInfo = {
    pid: process.pid,
    webhookUrl: "",
    healthUrl: "",
    region: LOCAL_REGION,
    endpoints: { aws: inject("fauxqsEndpoint"), dynamodb: inject("dynamoEndpoint") },
    tables: localTableNames(uniqueName("t")),
    bucket: "none",
    queues: {
      events: { url: "", arn: "", deadLetterUrl: "" },
      recordings: { url: "", arn: "", deadLetterUrl: "" },
    },
    credentials: { username: "u", password: "p" },
    startedAt: new Date().toISOString(),
    ...parts,
  };
  writeFileSync(join(dir, "stack.json"), JSON.stringify(info));
  return dir;
}
