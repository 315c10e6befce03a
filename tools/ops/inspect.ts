import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { type Message, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import {
  dayOfKey,
  parseRawArchiveObject,
  type QuarantineRecord,
  quarantineRecordSchema,
  type RawArchiveLine,
  rawArchiveAppPrefix,
} from "../../shared/contracts/bucket-layout";
import { parseJsonContract } from "../../shared/contracts/queue-messages";
import { storeEvent } from "../../shared/ingest/core";
import { S3_PREFIX, SQS_INLINE_BODY_LIMIT_BYTES } from "../../shared/platform/constants";
import { oneEventId } from "../cli/event-id";

/**
 * What an operator looks at: the quarantine, the dead letters (without consuming them), and one
 * event put back on its queue. Local stack and deployed stacks alike (any S3 and SQS API).
 */

/** Every key under a prefix, following the listing's pages. */
export async function listKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  return (await listObjects(s3, bucket, prefix)).map((o) => o.key);
}

/** The lines of one raw-archive object (gzip or, written before, plain NDJSON). */
export async function archiveLines(s3: S3Client, bucket: string, key: string): Promise<RawArchiveLine[]> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return parseRawArchiveObject((await out.Body?.transformToByteArray()) ?? new Uint8Array(), key);
}

async function getText(s3: S3Client, bucket: string, key: string): Promise<string> {
  return (
    (await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body?.transformToString()) ??
    ""
  );
}

export interface Filter {
  appId?: string;
  /** Receipt day, YYYY-MM-DD. */
  date?: string;
}

function prefixOf(root: string, filter: Filter): string {
  return filter.appId
    ? `${root}app=${encodeURIComponent(filter.appId)}/${filter.date ? `date=${filter.date}/` : ""}`
    : root;
}

const onDay = (filter: Filter) => (key: string) => !filter.date || dayOfKey(key) === filter.date;

/** A quarantined event, as an operator reads it. */
export interface QuarantinedEvent {
  eventId: string;
  trigger: string;
  appId?: string;
  receivedAt: number;
  quarantinedAt: number;
  error: string;
  key: string;
}

/**
 * The quarantined events, newest first, each with why it was refused.
 *
 * @example await listQuarantine(s3, bucket, { appId: "app1" }) // [{ eventId, trigger, error, … }]
 */
export async function listQuarantine(
  s3: S3Client,
  bucket: string,
  filter: Filter = {},
): Promise<QuarantinedEvent[]> {
  const keys = (await listKeys(s3, bucket, prefixOf(S3_PREFIX.quarantine, filter))).filter(onDay(filter));
  const records = await Promise.all(
    keys.map(async (key) => {
      const r: QuarantineRecord = parseJsonContract(
        quarantineRecordSchema,
        await getText(s3, bucket, key),
        `quarantine record ${key}`,
      );
      return {
        eventId: r.eventId,
        trigger: r.trigger,
        appId: r.appId,
        receivedAt: r.receivedAt,
        quarantinedAt: r.quarantinedAt,
        error: r.error,
        key,
      };
    }),
  );
  return records.sort((a, b) => b.quarantinedAt - a.quarantinedAt || b.receivedAt - a.receivedAt);
}

/** A dead-lettered message, as an operator reads it. */
export interface DeadLetter {
  messageId: string;
  receiveCount: number;
  /** When it was first sent to its queue, epoch ms. */
  sentAt?: number;
  attributes: Record<string, string | undefined>;
  /** The first 200 characters of the body. */
  body: string;
}

/**
 * The messages of a dead-letter queue, without consuming them: received with a zero visibility
 * timeout (they stay visible, and are not deleted), until a receive brings nothing new. Each look
 * adds one to a message's receive count, which a DLQ does not act on.
 */
export async function peekDeadLetters(sqs: SQSClient, queueUrl: string, max = 100): Promise<DeadLetter[]> {
  const seen = new Map<string, Message>();
  for (let idle = 0; idle < 3 && seen.size < max; ) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
    );
    const fresh = (out.Messages ?? []).filter((m) => m.MessageId && !seen.has(m.MessageId));
    for (const m of fresh) seen.set(m.MessageId ?? "", m);
    idle = fresh.length === 0 ? idle + 1 : 0;
  }
  return [...seen.values()].slice(0, max).map((m) => ({
    messageId: m.MessageId ?? "",
    receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 0),
    sentAt: m.Attributes?.SentTimestamp ? Number(m.Attributes.SentTimestamp) : undefined,
    attributes: Object.fromEntries(
      Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue]),
    ),
    body: (m.Body ?? "").slice(0, 200),
  }));
}

/** Where an event was found: the quarantine or the raw archive, with its body as it was received. */
export interface FoundEvent {
  source: "quarantine" | "archive";
  key: string;
  line: RawArchiveLine;
  error?: string;
}

/**
 * The events whose id starts with `prefix` (a full id, or a prefix: see `event-id.ts`): from the
 * quarantine, else the raw archive at their first receipt (narrowed by app and day). A full id
 * stops at the first archive object that holds it; a prefix reads every object under the filter,
 * so that an ambiguous one is known.
 */
export async function findEvents(
  s3: S3Client,
  bucket: string,
  prefix: string,
  filter: Filter = {},
): Promise<FoundEvent[]> {
  const found = new Map<string, FoundEvent>();
  const quarantined = (await listKeys(s3, bucket, prefixOf(S3_PREFIX.quarantine, filter))).filter(
    (k) => onDay(filter)(k) && (k.split("/").pop() ?? "").startsWith(prefix),
  );
  for (const key of quarantined) {
    const r = parseJsonContract(quarantineRecordSchema, await getText(s3, bucket, key), "quarantine record");
    found.set(r.eventId, { source: "quarantine", key, line: r, error: r.error });
  }
  const complete = () => prefix.length === 64 && found.size > 0;
  const root = filter.appId ? rawArchiveAppPrefix(filter.appId) : S3_PREFIX.raw;
  for (const key of complete() ? [] : (await listKeys(s3, bucket, root)).filter(onDay(filter))) {
    for (const line of await archiveLines(s3, bucket, key)) {
      const known = found.get(line.eventId);
      if (!line.eventId.startsWith(prefix) || known?.source === "quarantine") continue;
      if (!known || line.receivedAt < known.line.receivedAt)
        found.set(line.eventId, { source: "archive", key, line });
    }
    if (complete()) break;
  }
  return [...found.values()];
}

/** The one event an id or prefix names (`findEvents`); `AmbiguousEventIdError` if it fits several. */
export async function findEvent(
  s3: S3Client,
  bucket: string,
  prefix: string,
  filter: Filter = {},
): Promise<FoundEvent | undefined> {
  const found = await findEvents(s3, bucket, prefix, filter);
  const id = oneEventId(
    prefix,
    found.map((f) => f.line.eventId),
  );
  return found.find((f) => f.line.eventId === id);
}

/**
 * Puts an event back on the events queue as the ingest would have (its attributes, its first
 * receipt time; through S3 when too large for SQS). Projection is idempotent: an event already
 * projected comes out stale.
 */
export async function resendEvent(
  sqs: SQSClient,
  s3: S3Client,
  bucket: string,
  queueUrl: string,
  line: RawArchiveLine,
): Promise<void> {
  const { trigger, appId, receivedAt, eventId } = line;
  await storeEvent(
    Buffer.from(line.body, "utf8"),
    line.body,
    { trigger, appId, receivedAt, eventId },
    {
      queue: sqsMessageQueue(sqs, queueUrl),
      oversizeStore: s3BlobStore(s3, bucket),
      limits: { inlineBodyLimitBytes: SQS_INLINE_BODY_LIMIT_BYTES },
    },
  );
}

/** What `resend` did (or, dry, would do) with one event. */
export interface ResendReport {
  eventId: string;
  trigger: string;
  appId?: string;
  receivedAt: number;
  source: FoundEvent["source"];
  resent: boolean;
}

/**
 * `resend` (the CLI's and the console's): finds one event by id or prefix (`findEvent`) and, unless
 * `dryRun`, puts it back on the events queue (`resendEvent`). Not found: `undefined`.
 */
export async function resendById(
  clients: { s3: S3Client; sqs: SQSClient },
  where: { bucket: string; queueUrl: string },
  eventId: string,
  options: Filter & { dryRun?: boolean } = {},
): Promise<ResendReport | undefined> {
  const found = await findEvent(clients.s3, where.bucket, eventId, options);
  if (!found) return undefined;
  if (!options.dryRun) await resendEvent(clients.sqs, clients.s3, where.bucket, where.queueUrl, found.line);
  const { eventId: fullId, trigger, appId, receivedAt } = found.line;
  return { eventId: fullId, trigger, appId, receivedAt, source: found.source, resent: !options.dryRun };
}
