import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import {
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";

/**
 * fauxqs keeps everything in memory. So that the local stack's data survives a restart, its
 * bucket and its queues' pending messages are saved under `<state dir>/fauxqs/` on stop and put
 * back on start (DynamoDB Local persists its own files). A message's receive count starts over.
 */
interface SavedMessage {
  queueUrl: string;
  body: string;
  attributes: Record<string, MessageAttributeValue>;
}

export async function saveSnapshot(
  dir: string,
  s3: S3Client,
  bucket: string,
  sqs: SQSClient,
  queueUrls: string[],
) {
  const root = join(dir, "fauxqs");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(root, "objects"), { recursive: true });
  const index: Array<{ key: string; file: string; contentType?: string; metadata?: Record<string, string> }> =
    [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      if (!object.Key) continue;
      const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: object.Key }));
      const file = String(index.length);
      writeFileSync(
        join(root, "objects", file),
        (await out.Body?.transformToByteArray()) ?? new Uint8Array(),
      );
      index.push({ key: object.Key, file, contentType: out.ContentType, metadata: out.Metadata });
    }
    token = page.NextContinuationToken;
  } while (token);
  const messages: SavedMessage[] = [];
  for (const queueUrl of queueUrls) {
    for (;;) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 600,
          MessageAttributeNames: ["All"],
        }),
      );
      if (!out.Messages?.length) break;
      for (const m of out.Messages)
        messages.push({ queueUrl, body: m.Body ?? "", attributes: m.MessageAttributes ?? {} });
    }
  }
  writeFileSync(join(root, "index.json"), JSON.stringify({ bucket, objects: index, messages }));
  return { objects: index.length, messages: messages.length };
}

export async function restoreSnapshot(dir: string, s3: S3Client, bucket: string, sqs: SQSClient) {
  const file = join(dir, "fauxqs", "index.json");
  if (!existsSync(file)) return { objects: 0, messages: 0 };
  const saved = JSON.parse(readFileSync(file, "utf8")) as {
    objects: Array<{ key: string; file: string; contentType?: string; metadata?: Record<string, string> }>;
    messages: SavedMessage[];
  };
  for (const o of saved.objects) {
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: o.key,
        Body: readFileSync(join(dir, "fauxqs", "objects", o.file)),
        ContentType: o.contentType,
        Metadata: o.metadata,
      }),
    );
  }
  for (const m of saved.messages) {
    await sqs.send(
      new SendMessageCommand({ QueueUrl: m.queueUrl, MessageBody: m.body, MessageAttributes: m.attributes }),
    );
  }
  rmSync(join(dir, "fauxqs"), { recursive: true, force: true });
  return { objects: saved.objects.length, messages: saved.messages.length };
}
