import { DeleteCommand, type DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod/mini";
import { queryAll } from "../adapters/dynamo-reads";
import { APPS_TABLE } from "../platform/tables";

/**
 * The erased subjects (#50): for a while after each erasure of one user, the apps table keeps a
 * mark of it, which the projector reads (one Query, cached: `in-flight.ts`) to redact a delivery
 * that names the user and was received before the erasure ended (queued, in flight, retried or
 * redriven from the dead-letter queue) before it archives, projects or publishes it. So an
 * erasure is complete without a second run.
 *
 * - appId `_erased` (no app the platform issues: its ids are hexadecimal), record `<subject>`:
 *   `erasureSubject(appId, uid)`, the SHA-256 of the app and the uid, as the erasure under way and
 *   the stream's erasure notice name the user; never the uid, a name or any text;
 * - with the app, the erasure's id and pseudonym (what the redaction writes: every figure stays
 *   exact), and `until`: the end of the erasure (deliveries received up to it are redacted;
 *   absent while it runs: every delivery naming the user);
 * - `expiresAt` (epoch seconds): `ERASED_MARK_DAYS` after the erasure, when no delivery received
 *   before it can still be queued; the reader ignores a mark past it, and the end of the next
 *   erasure deletes it (the apps table has no TTL).
 */

/** The apps table's partition of the marks. */
export const ERASED_SUBJECTS_APP_ID = "_erased";

/**
 * How long a mark is kept after its erasure, days: longer than a delivery received before the
 * erasure can wait to be projected (SQS keeps a message at most 14 days, and a dead-lettered one
 * at most 14 days from its first enqueue; `redrive` sends it again, with its first receipt).
 */
export const ERASED_MARK_DAYS = 30;

/** One erased user, as the projector needs it: no uid, name or text. */
export interface ErasedSubject {
  /** `erasureSubject(appId, uid)`. */
  subject: string;
  appId: string;
  erasureId: string;
  pseudonym: string;
  /** Deliveries received up to this time (epoch ms) are redacted; absent while the erasure runs: every one. */
  until?: number;
  /** When the mark lapses (epoch seconds). */
  expiresAt: number;
}

/** An item of the partition, as stored (checked: the table is outside the code). */
const markSchema = z.object({
  record: z.string(),
  app: z.string(),
  erasureId: z.string(),
  pseudonym: z.string(),
  until: z.optional(z.number()),
  expiresAt: z.number(),
});

/** The marks, where they are kept. */
export interface ErasedSubjects {
  /** Every mark not yet expired at `nowMs` (one Query, its pages). */
  list(nowMs: number): Promise<ErasedSubject[]>;
  /** Writes (or rewrites) a mark. */
  mark(subject: ErasedSubject): Promise<void>;
  /** Deletes the marks expired at `nowMs`; returns how many. */
  sweep(nowMs: number): Promise<number>;
}

const keyOf = (subject: string) => ({
  [APPS_TABLE.partitionKey.name]: ERASED_SUBJECTS_APP_ID,
  [APPS_TABLE.sortKey?.name ?? "record"]: subject,
});

/**
 * Every mark in the apps table, expired or not (one Query, its pages): what the projector reads
 * (`listErasedSubjects`), apart from what `forget` writes so that the projector's bundle holds no
 * write of the table.
 */
function allMarks(doc: DynamoDBDocumentClient, tableName: string) {
  return async (): Promise<ErasedSubject[]> => {
    const items = await queryAll(doc, {
      TableName: tableName,
      KeyConditionExpression: "#pk = :pk",
      ExpressionAttributeNames: { "#pk": APPS_TABLE.partitionKey.name },
      ExpressionAttributeValues: { ":pk": ERASED_SUBJECTS_APP_ID },
    });
    return items.flatMap((item) => {
      const mark = markSchema.safeParse(item);
      if (!mark.success) return [];
      const { record, app, ...rest } = mark.data;
      return [{ subject: record, appId: app, ...rest }];
    });
  };
}

/**
 * The marks not yet expired at `nowMs`: the projector's read (one Query of the `_erased`
 * partition, its pages).
 *
 * @example await listErasedSubjects(doc, "apps")(Date.now()) // [{ subject: "3b0c…", appId: "app1", pseudonym: "erased-7f…", … }]
 */
export function listErasedSubjects(
  doc: DynamoDBDocumentClient,
  tableName: string,
): (nowMs: number) => Promise<ErasedSubject[]> {
  const all = allMarks(doc, tableName);
  return async (nowMs) => (await all()).filter((m) => m.expiresAt * 1000 > nowMs);
}

/**
 * The marks in the apps table, as `forget` reads and writes them.
 *
 * @example await dynamoErasedSubjects(doc, "apps").mark(erasedMark(erasure, Date.now()))
 */
export function dynamoErasedSubjects(doc: DynamoDBDocumentClient, tableName: string): ErasedSubjects {
  const all = allMarks(doc, tableName);
  return {
    list: listErasedSubjects(doc, tableName),
    mark: async ({ subject, appId, ...rest }) => {
      await doc.send(
        new PutCommand({ TableName: tableName, Item: { ...keyOf(subject), app: appId, ...rest } }),
      );
    },
    sweep: async (nowMs) => {
      const expired = (await all()).filter((m) => m.expiresAt * 1000 <= nowMs);
      for (const { subject } of expired)
        await doc.send(new DeleteCommand({ TableName: tableName, Key: keyOf(subject) }));
      return expired.length;
    },
  };
}
