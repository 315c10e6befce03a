import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { type Message, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { listObjects } from "../../shared/adapters/s3-listing";
import { sqsMessageQueue } from "../../shared/adapters/sqs-message-queue";
import {
  dayOfKey,
  type QuarantineRecord,
  quarantineRecordSchema,
  type RawArchiveLine,
  utcDay,
} from "../../shared/contracts/bucket-layout";
import { parseJsonContract } from "../../shared/contracts/queue-messages";
import { storeEvent } from "../../shared/ingest/core";
import { S3_PREFIX, SQS_INLINE_BODY_LIMIT_BYTES } from "../../shared/platform/constants";
import { oneEventId, shortId } from "../cli/event-id";
import { UserFacingError } from "../cli/program";
import { archiveDays, scanArchive } from "./archive-scan";

export { archiveLines } from "./archive-scan";

/**
 * What an operator looks at: the quarantine, the dead letters (without consuming them), and one
 * event put back on its queue. Local stack and deployed stacks alike (any S3 and SQS API).
 */

/** Every key under a prefix, following the listing's pages. */
export async function listKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  return (await listObjects(s3, bucket, prefix)).map((o) => o.key);
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
  /** Receipt time (ms), when known (the console and `events` list it): only its hour is read. */
  receivedAt?: number;
  /** Without a day or receipt time, how many of the archive's most recent days a lookup reads. @default 31 */
  days?: number;
}

/** How many of the most recent receipt days a lookup by id alone reads (`Filter.days`). */
export const LOOKUP_DAYS = 31;

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

/** What a lookup found, and how far it looked (`searched`, for a reader: "raw archive 2026-01-08 back to …"). */
export interface EventSearch {
  found: FoundEvent[];
  searched: string;
}

/**
 * The events whose id starts with `prefix` (a full id, or a prefix: see `event-id.ts`): from the
 * quarantine, else the raw archive at their first receipt. The archive is read where the event
 * can be, newest first: the hour of `receivedAt` when known, else the day `date`, else the
 * `days` most recent receipt days (`LOOKUP_DAYS`), lines of other apps than `appId` skipped. A
 * full id stops at the first archive object that holds it; a prefix reads every object in that
 * window, so that an ambiguous one is known. Never the whole archive unless asked (`days`).
 *
 * @example (await findEvents(s3, bucket, id, { appId: "app1", receivedAt })).found[0]?.line.trigger
 */
export async function findEvents(
  s3: S3Client,
  bucket: string,
  prefix: string,
  filter: Filter = {},
): Promise<EventSearch> {
  const found = new Map<string, FoundEvent>();
  const date = filter.date ?? (filter.receivedAt === undefined ? undefined : utcDay(filter.receivedAt));
  const where = { ...filter, date };
  const quarantined = (await listKeys(s3, bucket, prefixOf(S3_PREFIX.quarantine, where))).filter(
    (k) => onDay(where)(k) && (k.split("/").pop() ?? "").startsWith(prefix),
  );
  for (const key of quarantined) {
    const r = parseJsonContract(quarantineRecordSchema, await getText(s3, bucket, key), "quarantine record");
    found.set(r.eventId, { source: "quarantine", key, line: r, error: r.error });
  }
  const complete = () => prefix.length === 64 && found.size > 0;
  if (complete()) return { found: [...found.values()], searched: "the quarantine" };
  let window: { from?: string; to?: string } = { from: date, to: date };
  if (!date) {
    const days = await archiveDays(s3, bucket);
    window = { from: days.at(-(filter.days ?? LOOKUP_DAYS)) ?? days[0], to: days.at(-1) };
  }
  const extent = await scanArchive(
    s3,
    bucket,
    { appId: filter.appId, ...window, receivedAt: filter.receivedAt },
    "newest",
    (line, key) => {
      const known = found.get(line.eventId);
      if (!line.eventId.startsWith(prefix) || known?.source === "quarantine") return;
      if (!known || line.receivedAt < known.line.receivedAt)
        found.set(line.eventId, { source: "archive", key, line });
      return complete() ? "stop" : undefined;
    },
  );
  const span =
    extent.days.length === 0
      ? "no day of the raw archive"
      : `the raw archive from ${extent.days[0]} back to ${extent.days.at(-1)} (${extent.days.length} day(s)${filter.receivedAt === undefined ? "" : ", the hour of its receipt"}, ${extent.objects} object(s))`;
  return { found: [...found.values()], searched: `the quarantine and ${span}` };
}

/**
 * The one event an id or prefix names (`findEvents`); `AmbiguousEventIdError` if it fits several.
 * `searched` says how far it looked.
 */
export async function findEvent(
  s3: S3Client,
  bucket: string,
  prefix: string,
  filter: Filter = {},
): Promise<{ event?: FoundEvent; searched: string }> {
  const { found, searched } = await findEvents(s3, bucket, prefix, filter);
  const id = oneEventId(
    prefix,
    found.map((f) => f.line.eventId),
  );
  return { event: found.find((f) => f.line.eventId === id), searched };
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
  line: Pick<RawArchiveLine, "body" | "trigger" | "appId" | "receivedAt" | "eventId">,
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
 * A line an erasure redacted (`erasure` set), which `resend` refuses: it was projected before the
 * erasure, which then rewrote the items it led to; sent again, it would bring back the erased
 * user's presence and memberships under the pseudonym. `replay` skips such lines for the same reason.
 */
export class RedactedEventError extends UserFacingError {
  override name = "RedactedEventError";
  constructor(
    readonly eventId: string,
    readonly erasureId: string,
  ) {
    super(
      `event ${shortId(eventId)} was redacted by erasure ${erasureId} (webhook forget): resending it would apply the erased user's line again, under their pseudonym, over the items the erasure rewrote; nothing sent (replay skips such lines too)`,
    );
  }
}

/**
 * `resend` (the CLI's and the console's): finds one event by id or prefix (`findEvent`) and, unless
 * `dryRun`, puts it back on the events queue (`resendEvent`). Not found: no `report`; `searched`
 * says how far the lookup looked either way.
 *
 * @throws RedactedEventError, with nothing sent (a dry run too), for a line an erasure redacted
 */
export async function resendById(
  clients: { s3: S3Client; sqs: SQSClient },
  where: { bucket: string; queueUrl: string },
  eventId: string,
  options: Filter & { dryRun?: boolean } = {},
): Promise<{ report?: ResendReport; searched: string }> {
  const { event: found, searched } = await findEvent(clients.s3, where.bucket, eventId, options);
  if (!found) return { searched };
  if (found.line.erasure !== undefined) throw new RedactedEventError(found.line.eventId, found.line.erasure);
  if (!options.dryRun) await resendEvent(clients.sqs, clients.s3, where.bucket, where.queueUrl, found.line);
  const { eventId: fullId, trigger, appId, receivedAt } = found.line;
  return {
    report: { eventId: fullId, trigger, appId, receivedAt, source: found.source, resent: !options.dryRun },
    searched,
  };
}
