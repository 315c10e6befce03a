import { createHash } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  CopyObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { appKey } from "@webhook-backend/stream/projections/keys";
import {
  applyRecordingOutcome,
  type RecordingOutcome,
  type SessionState,
  withoutQuery,
} from "@webhook-backend/stream/projections/sessions";
import type { RecordingJob } from "../contracts/queue-messages";
import { S3_PREFIX } from "../platform/constants";
import { type FetchFailureReason, RecordingFetchError, StorageError } from "../platform/errors";
import type { ItemStore } from "../ports/item-store";
import { mayCarryApiKey } from "./address-policy";
import { type OpenedStream, openSafeStream, type Resolver } from "./safe-fetch";

export interface RecorderLimits {
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  /** Total deadline for one job, below the function's timeout. */
  deadlineMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** Multipart part size (bytes); memory is about partSize × queueSize. */
  partSize: number;
  queueSize: number;
  /**
   * Largest object the in-place CopyObject (which stamps size and checksum) may copy: S3's limit
   * for one copy request. Above it the checksum goes in a manifest object beside the recording.
   * @default COPY_OBJECT_LIMIT
   */
  copyLimitBytes?: number;
}

/** S3 copies at most 5 GB in one CopyObject request. */
const COPY_OBJECT_LIMIT = 5_000_000_000;

/** The manifest beside a recording too large to stamp in place: `<key>.manifest.json`. */
const MANIFEST_SUFFIX = ".manifest.json";

export interface RecorderDependencies {
  s3: S3Client;
  bucket: string;
  sessions: ItemStore<SessionState>;
  /** Per-app API key for token-protected recordings (sent as `appId` and `apiKey` headers). */
  apiKeyFor(appId: string): Promise<string | undefined>;
  resolver: Resolver;
  allowHttp: boolean;
  allowedHosts: readonly string[];
  /** The platform's own hosts (and their subdomains): the only ones a request carries the app's key to. */
  apiKeyHosts: readonly string[];
  limits: RecorderLimits;
  now: () => number;
}

export type ArchiveResult =
  | { status: "archived"; key: string; size: number; sha256: string; skipped: boolean }
  | { status: "failed"; reason: FetchFailureReason; detail: string; retry: boolean };

const EXTENSIONS: Record<string, string> = {
  "video/mp4": "mp4",
  "audio/mp4": "m4a",
  "audio/mpeg": "mp3",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "video/webm": "webm",
  "audio/webm": "weba",
  "audio/ogg": "ogg",
  "video/quicktime": "mov",
  "video/x-matroska": "mkv",
};

/** The file extension for a content type (`bin` when unknown). */
function extensionFor(contentType: string): string {
  return EXTENSIONS[contentType.toLowerCase()] ?? "bin";
}

/** S3 reports an object's time to the second in headers, to the millisecond in XML: keep seconds. */
function wholeSeconds(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/** The key of a recording without its extension (which depends on the content type). */
function recordingKeyStem(job: RecordingJob): string {
  const [yyyy, mm, dd] = job.recordingDate.split("-");
  const part = (s: string) => encodeURIComponent(s);
  return `${S3_PREFIX.recordings}${part(job.appId)}/${yyyy}/${mm}/${dd}/${part(job.sessionId)}/${part(job.startTime)}.`;
}

/**
 * `recordings/<appId>/<yyyy>/<mm>/<dd>/<sessionId>/<startTime>.<ext>`, dated by the recording date.
 *
 * @example recordingKey(job, "video/mp4") // "recordings/app1/2023/10/10/s1/1696937627.mp4"
 */
export function recordingKey(job: RecordingJob, contentType: string): string {
  return `${recordingKeyStem(job)}${extensionFor(contentType)}`;
}

/** Counts and hashes the bytes going through; past `maxBytes` it fails the stream. */
class MeteredStream extends Transform {
  readonly hash = createHash("sha256");
  bytes = 0;
  constructor(private readonly maxBytes: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      callback(new RecordingFetchError("too-large", `larger than ${this.maxBytes} bytes`, false));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }
}

/**
 * Whether the recording is already in the bucket with the same source and a checksum: then the
 * job is a no-op (it only links the object on the session, which a rebuilt table may lack).
 */
async function alreadyArchived(
  job: RecordingJob,
  attempt: number,
  deps: RecorderDependencies,
): Promise<ArchiveResult | undefined> {
  const source = withoutQuery(job.recordingUrl);
  const listed = await deps.s3.send(
    new ListObjectsV2Command({ Bucket: deps.bucket, Prefix: recordingKeyStem(job) }),
  );
  const keys = new Set((listed.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : [])));
  for (const key of keys) {
    if (key.endsWith(MANIFEST_SUFFIX)) continue;
    const head = await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: key }));
    // The checksum is on the object, or (above the copy limit) in its manifest.
    const stamp = head.Metadata?.sha256
      ? head.Metadata
      : keys.has(`${key}${MANIFEST_SUFFIX}`)
        ? await readManifest(key, deps)
        : undefined;
    const sha256 = stamp?.sha256;
    if (!sha256 || stamp?.["source-url"] !== source) continue;
    const object = { Key: key };
    const size = Number(stamp?.size ?? head.ContentLength ?? 0);
    await record(
      job,
      {
        status: "archived",
        bucket: deps.bucket,
        key: object.Key,
        size,
        sha256,
        contentType: head.ContentType ?? "application/octet-stream",
        archivedAt: wholeSeconds(head.LastModified?.getTime() ?? deps.now()),
        attempt,
      },
      deps,
    );
    return { status: "archived", key: object.Key, size, sha256, skipped: true };
  }
  return undefined;
}

async function record(
  job: RecordingJob,
  outcome: RecordingOutcome,
  deps: RecorderDependencies,
): Promise<void> {
  await deps.sessions.apply({ pk: appKey(job.appId, job.sessionId) }, (state) => {
    // The projector wrote the session before sending the job; if it is somehow missing, keep nothing.
    if (state === null) throw new StorageError(`session ${job.sessionId} of ${job.appId} not found`);
    return applyRecordingOutcome(state, job.startTime, outcome);
  });
}

/** Opens the recording through the safe fetch; refuses at once a declared length over the cap. */
async function openRecording(job: RecordingJob, deps: RecorderDependencies, signal: AbortSignal) {
  // The key goes to the platform's own hosts only: a recording_url is data from the outside.
  const apiKey = mayCarryApiKey(job.recordingUrl, deps.apiKeyHosts)
    ? await deps.apiKeyFor(job.appId)
    : undefined;
  const opened = await openSafeStream(job.recordingUrl, {
    allowHttp: deps.allowHttp,
    allowedHosts: deps.allowedHosts,
    resolver: deps.resolver,
    connectTimeoutMs: deps.limits.connectTimeoutMs,
    idleTimeoutMs: deps.limits.idleTimeoutMs,
    maxRedirects: deps.limits.maxRedirects,
    firstHopHeaders: apiKey ? { appId: job.appId, apiKey } : undefined,
    signal,
  });
  if (opened.contentLength !== undefined && opened.contentLength > deps.limits.maxBytes) {
    opened.response.destroy();
    throw new RecordingFetchError(
      "too-large",
      `Content-Length ${opened.contentLength} exceeds ${deps.limits.maxBytes}`,
      false,
    );
  }
  return opened;
}

/** The object metadata that names where a recording came from. */
function sourceMetadata(job: RecordingJob): Record<string, string> {
  return { "source-url": withoutQuery(job.recordingUrl), "session-id": job.sessionId, "app-id": job.appId };
}

/**
 * Streams the opened body through the meter into a multipart upload. If the download fails, the
 * upload fails with its body stream; if the upload fails, the download stops. `uploaded` is handed
 * out at once so that the caller can wait for lib-storage's abort before it reports a failure.
 */
async function streamToBucket(
  job: RecordingJob,
  opened: OpenedStream,
  deps: RecorderDependencies,
  signal: AbortSignal,
  onUpload: (uploaded: Promise<unknown>) => void,
): Promise<{ key: string; sha256: string; size: number }> {
  const key = recordingKey(job, opened.contentType);
  const meter = new MeteredStream(deps.limits.maxBytes);
  const upload = new Upload({
    client: deps.s3,
    params: {
      Bucket: deps.bucket,
      Key: key,
      Body: meter,
      ContentType: opened.contentType,
      Metadata: sourceMetadata(job),
    },
    partSize: deps.limits.partSize,
    queueSize: deps.limits.queueSize,
    leavePartsOnError: false,
  });
  const uploaded = upload.done();
  onUpload(uploaded);
  await Promise.all([pipeline(opened.response, meter, { signal }), uploaded]);
  return { key, sha256: meter.hash.digest("hex"), size: meter.bytes };
}

/**
 * Size and checksum are only known at the end: copies the object onto itself with them added to
 * its metadata. Resolves to the object's time (what a later relink from S3 reads back).
 */
async function readManifest(
  key: string,
  deps: RecorderDependencies,
): Promise<Record<string, string> | undefined> {
  const out = await deps.s3.send(
    new GetObjectCommand({ Bucket: deps.bucket, Key: `${key}${MANIFEST_SUFFIX}` }),
  );
  const parsed = JSON.parse((await out.Body?.transformToString()) ?? "{}") as unknown;
  return parsed && typeof parsed === "object" ? (parsed as Record<string, string>) : undefined;
}

async function stampChecksum(
  job: RecordingJob,
  stored: { key: string; sha256: string; size: number },
  contentType: string,
  deps: RecorderDependencies,
): Promise<number> {
  if (stored.size > (deps.limits.copyLimitBytes ?? COPY_OBJECT_LIMIT)) {
    // Too large for one CopyObject: the same metadata, in a manifest beside the recording.
    await deps.s3.send(
      new PutObjectCommand({
        Bucket: deps.bucket,
        Key: `${stored.key}${MANIFEST_SUFFIX}`,
        ContentType: "application/json",
        Body: JSON.stringify({ ...sourceMetadata(job), sha256: stored.sha256, size: String(stored.size) }),
      }),
    );
    // The recording's own time, as a relink reads it back (HeadObject).
    const head = await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: stored.key }));
    return wholeSeconds(head.LastModified?.getTime() ?? deps.now());
  }
  const copied = await deps.s3.send(
    new CopyObjectCommand({
      Bucket: deps.bucket,
      Key: stored.key,
      CopySource: `${deps.bucket}/${stored.key.split("/").map(encodeURIComponent).join("/")}`,
      MetadataDirective: "REPLACE",
      ContentType: contentType,
      Metadata: { ...sourceMetadata(job), sha256: stored.sha256, size: String(stored.size) },
    }),
  );
  return wholeSeconds(copied.CopyObjectResult?.LastModified?.getTime() ?? deps.now());
}

/** Why a job failed, as a `RecordingFetchError` (the cause kept). */
function failureOf(error: unknown, deadline: AbortSignal): RecordingFetchError {
  if (error instanceof RecordingFetchError) return error;
  if (deadline.aborted)
    return new RecordingFetchError("timeout", "the total deadline passed", true, { cause: error });
  return new RecordingFetchError("network", error instanceof Error ? error.message : String(error), true, {
    cause: error,
  });
}

/**
 * Archives one recording: skip (and link) if the bucket already holds it with the same source and
 * checksum; else stream it (safe fetch) through a hash/size meter into a multipart upload; add
 * size and SHA-256 to the object's metadata; record the outcome on the session. Any failure
 * aborts the upload (no parts left behind) and is recorded with its reason.
 *
 * @example await archiveRecording(job, 1, deps) // { status: "archived", key: "recordings/…", … }
 */
export async function archiveRecording(
  job: RecordingJob,
  attempt: number,
  deps: RecorderDependencies,
): Promise<ArchiveResult> {
  const done = await alreadyArchived(job, attempt, deps);
  if (done) return done;

  const deadline = AbortSignal.timeout(deps.limits.deadlineMs);
  let opened: OpenedStream | undefined;
  let uploaded: Promise<unknown> | undefined;
  try {
    opened = await openRecording(job, deps, deadline);
    const stored = await streamToBucket(job, opened, deps, deadline, (u) => {
      uploaded = u;
    });
    const archivedAt = await stampChecksum(job, stored, opened.contentType, deps);
    await record(
      job,
      {
        status: "archived",
        bucket: deps.bucket,
        ...stored,
        contentType: opened.contentType,
        archivedAt,
        attempt,
      },
      deps,
    );
    return { status: "archived", ...stored, skipped: false };
  } catch (error) {
    opened?.response.destroy();
    // Once the upload has settled, lib-storage has aborted the multipart upload
    // (AbortMultipartUpload), so no part is left behind. Not `upload.abort()`: that settles at
    // once and leaves the abort running in the background.
    await uploaded?.catch(() => undefined);
    const failure = failureOf(error, deadline);
    await record(
      job,
      {
        status: "failed",
        reason: failure.reason,
        detail: failure.message,
        attempt,
        final: !failure.retryable,
        at: deps.now(),
      },
      deps,
    );
    return { status: "failed", reason: failure.reason, detail: failure.message, retry: failure.retryable };
  }
}
