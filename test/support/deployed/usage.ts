import { compactDayPrefix } from "../../../shared/analytics/compaction";
import { userSetKey } from "../../../shared/analytics/user-sets";
import {
  edgeArchiveDayPrefix,
  oversizeKey,
  rawArchiveHourPrefix,
} from "../../../shared/contracts/bucket-layout";
import { importDayKey } from "../../../shared/contracts/import-records";
import { S3_PREFIX } from "../../../shared/platform/constants";
import type { IamRequest } from "./iam";
import type { TemplateJson } from "./template";

/**
 * The reviewed model: what the suite's run of the functions (`recorded-run.ts`, its requests
 * recorded and checked as they were sent) cannot drive, each with why. Keys come from the key
 * builders the code itself uses, resources from the template's logical ids. It holds:
 * - what AWS sends with a function's credentials and no emulator does: Lambda's polling of an
 *   event source (the run's poller is Lambda's, with clients of its own), Athena's reads of Glue
 *   and the archive and its writes of results and of a CTAS's Parquet (Athena runs a query with
 *   its caller's permissions; the run's Athena is a stand-in);
 * - paths the run does not provoke: a conditional write that lost to another writer re-reads its
 *   item (GetItem; one poller never races itself), SNS refusing a publish (the unpublished queue
 *   and its oversize body: a fault fauxqs cannot produce), a failed multipart upload (its abort),
 *   a query stopped at the deadline, and what needs Athena's answer rows (an app's figures
 *   replaced: the activity table's Query and GetItem; the day sets read back and rewritten; an
 *   import's day records dropped), which the stand-in does not give.
 */
export interface FunctionUsage {
  requests: IamRequest[];
  /**
   * Commands the bundle keeps that no path of this function sends, each with why: code a shared
   * module brings along (the SDK's, or an adapter's other half). A kept command not listed here
   * must be in `requests` (else the check names it).
   */
  keptUnsent: Record<string, string>;
}

/** The IAM actions a command of the SDK needs (its operation name, as the bundle keeps it). */
export const COMMAND_ACTIONS: Record<string, string[]> = {
  GetObject: ["s3:GetObject"],
  HeadObject: ["s3:GetObject"],
  PutObject: ["s3:PutObject"],
  CopyObject: ["s3:GetObject", "s3:PutObject"],
  CreateMultipartUpload: ["s3:PutObject"],
  UploadPart: ["s3:PutObject"],
  CompleteMultipartUpload: ["s3:PutObject"],
  AbortMultipartUpload: ["s3:AbortMultipartUpload"],
  ListObjectsV2: ["s3:ListBucket"],
  DeleteObject: ["s3:DeleteObject"],
  DeleteObjects: ["s3:DeleteObject"],
  PutObjectTagging: ["s3:PutObjectTagging"],
  GetItem: ["dynamodb:GetItem"],
  BatchGetItem: ["dynamodb:BatchGetItem"],
  PutItem: ["dynamodb:PutItem"],
  UpdateItem: ["dynamodb:UpdateItem"],
  DeleteItem: ["dynamodb:DeleteItem"],
  Query: ["dynamodb:Query"],
  Scan: ["dynamodb:Scan"],
  TransactWriteItems: ["dynamodb:PutItem", "dynamodb:DeleteItem"],
  SendMessage: ["sqs:SendMessage"],
  PublishBatch: ["sns:Publish"],
  GetSecretValue: ["secretsmanager:GetSecretValue"],
  StartQueryExecution: ["athena:StartQueryExecution"],
  GetQueryExecution: ["athena:GetQueryExecution"],
  GetQueryResults: ["athena:GetQueryResults"],
  StopQueryExecution: ["athena:StopQueryExecution"],
};

/** Kept by the SDK in every bundle that has its client, sent by none of these functions. */
const SDK_KEPT: Record<string, string> = {
  CreateSession:
    "S3 Express One Zone's session, sent only to a directory bucket (the data bucket is general purpose)",
  DescribeEndpoints: "DynamoDB's endpoint discovery, off unless a client enables it",
  Scan: "kept with lib-dynamodb's commands; no function scans a table (the erasure, a command, does)",
};

/** The template's logical id of the first resource of `type` whose id starts with `prefix`. */
export function idOf(template: TemplateJson, type: string, prefix: string): string {
  const id = Object.keys(template.Resources).find(
    (k) => k.startsWith(prefix) && template.Resources[k]?.Type === type,
  );
  if (!id) throw new Error(`no ${type} ${prefix}… in the template`);
  return id;
}

/** Each backend function's usage, by its service name (`POWERTOOLS_SERVICE_NAME`). */
export function usageOf(template: TemplateJson) {
  const id = (type: string, prefix: string) => idOf(template, type, prefix);
  const bucket = `arn:${id("AWS::S3::Bucket", "DataBucket")}`;
  const object = (key: string) => `${bucket}/${key}`;
  const table = (name: string) => `arn:${id("AWS::DynamoDB::Table", name)}`;
  const queue = (name: string) => `arn:${id("AWS::SQS::Queue", name)}`;
  const day = "2026-01-02";
  const at = Date.UTC(2026, 0, 2, 7);
  const projectionTables = ["TablesGroups", "TablesMemberships", "TablesPresence", "TablesSessions"].map(
    table,
  );
  const polls = (q: string): IamRequest[] =>
    [
      "sqs:ReceiveMessage",
      "sqs:ChangeMessageVisibility",
      "sqs:GetQueueUrl",
      "sqs:DeleteMessage",
      "sqs:GetQueueAttributes",
    ].map((action) => ({ action, resource: queue(q) }));
  const glue = (resource: string) => `arn:aws:glue:REGION:ACCOUNT:${resource}`;
  const database = String(
    (
      template.Resources[id("AWS::Glue::Database", "AnalyticsDatabase")]?.Properties?.DatabaseInput as {
        Name?: string;
      }
    )?.Name,
  );
  const workGroup = `arn:aws:athena:REGION:ACCOUNT:workgroup/ref:${id("AWS::Athena::WorkGroup", "AnalyticsWorkGroup")}`;

  const usage: Record<string, FunctionUsage> = {
    ingest: {
      requests: [],
      keptUnsent: {
        ...SDK_KEPT,
        GetObject: "the BlobStore port's read half: the ingest only writes oversize bodies",
        ListObjectsV2: "the BlobStore port's getBytesIfPresent: the ingest reads nothing back",
      },
    },
    projector: {
      requests: [
        ...polls("EventsQueue"),
        ...projectionTables.map((resource) => ({ action: "dynamodb:GetItem", resource })),
        // SNS refused a publish: the fact waits in the unpublished queue, its body in S3 if too big.
        { action: "sqs:SendMessage", resource: queue("StreamUnpublished") },
        { action: "s3:PutObject", resource: object(oversizeKey("app1", at, "e2")) },
      ],
      keptUnsent: {
        ...SDK_KEPT,
        ListObjectsV2:
          "the BlobStore port's getBytesIfPresent: the projector reads only the oversize body a message points to",
        Query: "the item store's module (dynamo-reads); the projector reads items by key",
      },
    },
    recorder: {
      requests: [
        ...polls("RecordingsQueue"),
        { action: "s3:AbortMultipartUpload", resource: object(`${S3_PREFIX.recordings}app1/s1.mp4`) },
      ],
      keptUnsent: {
        ...SDK_KEPT,
        BatchGetItem: "the item store's readMany: the recorder reads and writes one session at a time",
        Query: "the item store's module (dynamo-reads)",
        PutObjectTagging: "lib-storage's Upload tags an object only when given tags; the recorder gives none",
      },
    },
    reconciler: {
      requests: [
        { action: "dynamodb:GetItem", resource: table("TablesPresence") },
        // SNS refused a reconcile fact's publish: it waits in the unpublished queue (#57 item 4).
        { action: "sqs:SendMessage", resource: queue("StreamUnpublished") },
      ],
      keptUnsent: {
        ...SDK_KEPT,
        GetObject: "the BlobStore port's read half: the reconciler only archives its facts",
        ListObjectsV2: "the BlobStore port's getBytesIfPresent: the reconciler reads nothing back",
      },
    },
    rollup: {
      requests: [
        { action: "athena:StopQueryExecution", resource: workGroup },
        // Athena, with the rollup's credentials: the catalog, the archive, its results.
        ...[
          "catalog",
          `database/${database}`,
          ...["archive_events", "archive_edges", "archive_compact"].map((t) => `table/${database}/${t}`),
        ].flatMap((r) =>
          ["glue:GetDatabase", "glue:GetTable"].map((action) => ({ action, resource: glue(r) })),
        ),
        ...["catalog", `database/${database}`, `table/${database}/compact_2026_01_02_1f3a9c0e`].flatMap((r) =>
          ["glue:CreateTable", "glue:DeleteTable", "glue:GetTable"].map((action) => ({
            action,
            resource: glue(r),
          })),
        ),
        { action: "s3:GetBucketLocation", resource: bucket },
        ...[`${rawArchiveHourPrefix(at)}b.ndjson.gz`, `${edgeArchiveDayPrefix(day)}b.ndjson.gz`].map(
          (key) => ({
            action: "s3:GetObject",
            resource: object(key),
          }),
        ),
        ...["s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"].map((action) => ({
          action,
          resource: object(`${S3_PREFIX.athenaResults}q1.csv`),
        })),
        ...["s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"].map((action) => ({
          action,
          resource: object(`${compactDayPrefix(day)}${"a".repeat(32)}/part-0`),
        })),
        // What needs Athena's rows: the day sets read back and rewritten, an import's records.
        ...["s3:GetObject", "s3:DeleteObject"].map((action) => ({
          action,
          resource: object(userSetKey(day)),
        })),
        { action: "s3:DeleteObject", resource: object(importDayKey("users", day)) },
        // The expiry sweep of an import day carries the lines a kept day depends on to that day's
        // object first (#50 defect 8): the run plants no expiring import day.
        ...["s3:GetObject", "s3:PutObject"].map((action) => ({
          action,
          resource: object(importDayKey("users", day)),
        })),
        ...["dynamodb:GetItem", "dynamodb:Query"].map((action) => ({
          action,
          resource: table("AnalyticsActivity"),
        })),
        // A pass that outlasts a third of the archive lease renews it (an UpdateItem conditional
        // on its holder, #50 defect 4): the run's passes are short.
        { action: "dynamodb:UpdateItem", resource: table("AnalyticsActivity") },
      ],
      keptUnsent: { ...SDK_KEPT },
    },
  };
  return usage;
}
