import { createHash } from "node:crypto";
import type http from "node:http";
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import {
  DeleteBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
} from "@aws-sdk/client-s3";
import { appKey } from "@webhook-backend/stream/projections/keys";
import { evolveSession, type SessionState } from "@webhook-backend/stream/projections/sessions";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { documentClient, dynamoItemStore } from "../../shared/adapters/dynamo-item-store";
import type { RecordingJob } from "../../shared/contracts/queue-messages";
import { SESSIONS_TABLE } from "../../shared/platform/tables";
import { archiveRecording, type RecorderDependencies } from "../../shared/recorder/archive";
import { recordSqsBatch } from "../../shared/recorder/batch";
import { systemResolver } from "../../shared/recorder/safe-fetch";
import { createProjectionTables, localTableNames } from "../../tools/local/provision";
import { sqsEvent, sqsRecord } from "../../tools/local/sqs-event";
import { type FileServer, fileSha256, fileStream, startFileServer } from "../../tools/simulate/file-server";
import { createBucket, testClients, uniqueName } from "../support/aws";
import { fixture } from "../support/fixtures";
import { inputOf } from "../support/projection";

const { dynamo, s3 } = testClients();
const MiB = 1024 * 1024;
let server: FileServer;
const seen: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];
const flaky = new Map<string, number>();

beforeAll(async () => {
  server = await startFileServer({
    extra(req, res) {
      seen.push({ url: req.url ?? "", headers: req.headers });
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname === "/protected") {
        // Token-protected file access: 401 without the app's headers, else a redirect to a
        // short-lived URL on another host name.
        if (req.headers.appid !== "app-tok" || req.headers.apikey !== "secret-key") res.writeHead(401).end();
        else
          res
            .writeHead(302, {
              location: `http://localhost:${server.port}/recordings/signed-${2 * MiB}.mp4?X-Sig=1`,
            })
            .end();
        return true;
      }
      const hops = /^\/redirect\/(\d+)$/.exec(url.pathname);
      if (hops) {
        const n = Number(hops[1]);
        res.writeHead(302, { location: n > 1 ? `/redirect/${n - 1}` : `/recordings/chain-${MiB}.mp4` }).end();
        return true;
      }
      if (url.pathname === "/flaky") {
        const count = (flaky.get(url.search) ?? 0) + 1;
        flaky.set(url.search, count);
        if (count === 1) res.writeHead(500).end();
        else res.writeHead(302, { location: `/recordings/flaky-${MiB}.mp4` }).end();
        return true;
      }
      if (url.pathname === "/slow") {
        res.writeHead(200, { "content-type": "video/mp4" });
        res.write(Buffer.alloc(1024));
        return true; // and then nothing: the idle timeout must fire
      }
      if (url.pathname === "/endless") {
        res.writeHead(200, { "content-type": "video/mp4" });
        fileStream(Number.MAX_SAFE_INTEGER).pipe(res);
        return true;
      }
      if (url.pathname === "/gone") {
        res.writeHead(404).end();
        return true;
      }
      return false;
    },
  });
});
afterAll(() => server.close());

async function setup(limits: Partial<RecorderDependencies["limits"]> = {}, bucketName?: string) {
  const names = localTableNames(uniqueName("rec"));
  await createProjectionTables(dynamo, names);
  const bucket = bucketName ?? (await createBucket(s3, uniqueName("recordings")));
  const sessions = dynamoItemStore<SessionState>(documentClient(dynamo), SESSIONS_TABLE, names.sessions);
  const deps: RecorderDependencies = {
    s3,
    bucket,
    sessions,
    apiKeyFor: async (appId) => (appId === "app-tok" ? "secret-key" : undefined),
    resolver: systemResolver,
    allowHttp: true,
    allowedHosts: ["127.0.0.1", "localhost"],
    apiKeyHosts: ["127.0.0.1", "localhost"],
    limits: {
      connectTimeoutMs: 2_000,
      idleTimeoutMs: 1_000,
      deadlineMs: 30_000,
      maxBytes: 64 * MiB,
      maxRedirects: 5,
      partSize: 5 * MiB,
      queueSize: 2,
      ...limits,
    },
    now: () => 1_700_000_000_000,
  };
  return { deps, bucket, sessions };
}

/** A session with a pending recording, as the projector leaves it, and the job it sent. */
async function pendingJob(deps: RecorderDependencies, appId: string, path: string): Promise<RecordingJob> {
  const event = fixture("recording_generated");
  event.appId = appId;
  event.data.recording_url = `${server.url}${path}`;
  const input = inputOf(event);
  const sessionId = event.data.sessionId as string;
  await deps.sessions.apply({ pk: appKey(appId, sessionId) }, (s) =>
    evolveSession(s, input as never, sessionId),
  );
  return {
    appId,
    sessionId,
    startTime: event.data.startTime,
    recordingDate: event.data.recordingDate,
    recordingUrl: event.data.recording_url,
    eventId: "e1",
  };
}

async function recordingOf(deps: RecorderDependencies, job: RecordingJob) {
  return (await deps.sessions.get({ pk: appKey(job.appId, job.sessionId) }))?.recordings[job.startTime];
}

describe("the recorder against fauxqs S3 and a local file server (local allowance on)", () => {
  it("archives a multi-part-sized file byte-identical, with its metadata, and records it on the session", async () => {
    const { deps, bucket } = await setup();
    const size = 12 * MiB + 123;
    const job = await pendingJob(deps, "app-a", `/recordings/big-${size}.mp4?token=abc`);
    const result = await archiveRecording(job, 1, deps);
    const key = `recordings/app-a/2023/10/10/${encodeURIComponent(job.sessionId)}/1696937627.mp4`;
    expect(result).toMatchObject({ status: "archived", key, size, skipped: false });
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const hash = createHash("sha256");
    for await (const chunk of object.Body as AsyncIterable<Buffer>) hash.update(chunk);
    const expected = await fileSha256(size);
    expect(hash.digest("hex")).toBe(expected);
    expect(object.ContentType).toBe("video/mp4");
    expect(object.Metadata).toMatchObject({
      sha256: expected,
      size: String(size),
      "source-url": `${server.url}/recordings/big-${size}.mp4`,
    });
    expect(await recordingOf(deps, job)).toMatchObject({
      status: "archived",
      key,
      size,
      sha256: expected,
      attempts: 1,
    });
    // A redelivered job is a no-op.
    expect(await archiveRecording(job, 2, deps)).toMatchObject({ status: "archived", skipped: true });
  });

  it("sends the app's key only to the platform's hop and follows its redirect to the short-lived URL", async () => {
    const { deps } = await setup();
    const job = await pendingJob(deps, "app-tok", "/protected");
    seen.length = 0;
    expect(await archiveRecording(job, 1, deps)).toMatchObject({ status: "archived", size: 2 * MiB });
    const [first, second] = seen;
    expect(first?.headers).toMatchObject({ appid: "app-tok", apikey: "secret-key" });
    expect(second?.url).toContain("/recordings/signed-");
    expect(second?.headers.apikey).toBeUndefined();
    expect(second?.headers.appid).toBeUndefined();
  });

  it("never sends the app's key to a host outside the platform's own (apiKeyHosts)", async () => {
    // Prepare: the app has a key, but the recording_url names a host the allowlist does not hold.
    const { deps } = await setup();
    const job = await pendingJob(deps, "app-tok", "/protected");
    seen.length = 0;

    // Act
    const result = await archiveRecording(job, 1, { ...deps, apiKeyHosts: ["recordings.platform.example"] });

    // Assess: the request went out without the key (so the protected file answers 401).
    expect(seen[0]?.headers.apikey).toBeUndefined();
    expect(seen[0]?.headers.appid).toBeUndefined();
    expect(result).toMatchObject({ status: "failed", reason: "http-status" });
  });

  it("without the key, a protected file fails with http-status 401, permanently", async () => {
    const { deps } = await setup();
    const job = await pendingJob(deps, "app-without-key", "/protected");
    expect(await archiveRecording(job, 1, deps)).toMatchObject({
      status: "failed",
      reason: "http-status",
      retry: false,
    });
    expect(await recordingOf(deps, job)).toMatchObject({ status: "failed", failureReason: "http-status" });
  });

  it("follows a redirect chain, and refuses one that is too long", async () => {
    const { deps } = await setup();
    const ok = await pendingJob(deps, "app-r", "/redirect/4");
    expect(await archiveRecording(ok, 1, deps)).toMatchObject({ status: "archived", size: MiB });
    const tooLong = await pendingJob(deps, "app-r2", "/redirect/9");
    expect(await archiveRecording(tooLong, 1, deps)).toMatchObject({
      status: "failed",
      reason: "too-many-redirects",
    });
  });

  it("retries a 500 through the batch handler and archives on the next receive", async () => {
    const { deps } = await setup();
    const job = await pendingJob(deps, "app-f", "/flaky?n=1");
    const obs = {
      logger: new Logger({ serviceName: "recorder-test", logLevel: "SILENT" }),
      metrics: new Metrics({ namespace: "Test", serviceName: "recorder-test" }),
    };
    const first = sqsRecord(JSON.stringify(job));
    expect((await recordSqsBatch(sqsEvent([first]), undefined, deps, obs)).batchItemFailures).toEqual([
      { itemIdentifier: first.messageId },
    ]);
    expect(await recordingOf(deps, job)).toMatchObject({
      status: "failed",
      failureReason: "http-status",
      attempts: 1,
    });
    const second = sqsRecord(JSON.stringify(job));
    second.attributes.ApproximateReceiveCount = "2";
    expect((await recordSqsBatch(sqsEvent([second]), undefined, deps, obs)).batchItemFailures).toEqual([]);
    expect(await recordingOf(deps, job)).toMatchObject({ status: "archived", attempts: 2, size: MiB });
  });

  it("acknowledges a job that breaks its contract, logs and counts it as invalid-job, and fetches nothing", async () => {
    // Prepare
    const { deps } = await setup();
    const obs = {
      logger: new Logger({ serviceName: "recorder-test", logLevel: "SILENT" }),
      metrics: new Metrics({ namespace: "Test", serviceName: "recorder-test" }),
    };
    const errors = vi.spyOn(obs.logger, "error");
    const before = seen.length;
    const { sessionId: _dropped, ...withoutSession } = await pendingJob(
      deps,
      "app-i",
      "/recordings/never-1024.mp4",
    );
    const records = [sqsRecord("not json"), sqsRecord(JSON.stringify(withoutSession))];

    // Act
    const response = await recordSqsBatch(sqsEvent(records), undefined, deps, obs);

    // Assess: nothing to retry (it never becomes valid), each logged with why, no download made.
    expect(response.batchItemFailures).toEqual([]);
    expect(
      errors.mock.calls.map(([message, fields]) => [message, fields as { outcome: string; error: string }]),
    ).toEqual([
      [
        "invalid recording job",
        expect.objectContaining({ outcome: "invalid-job", error: "recording job is not JSON" }),
      ],
      [
        "invalid recording job",
        expect.objectContaining({
          outcome: "invalid-job",
          error: expect.stringContaining("invalid recording job: sessionId"),
        }),
      ],
    ]);
    expect(seen.length).toBe(before);
  });

  it("gives up on a server that stops sending (idle timeout), to be retried", async () => {
    const { deps } = await setup({ idleTimeoutMs: 300 });
    const job = await pendingJob(deps, "app-s", "/slow");
    expect(await archiveRecording(job, 1, deps)).toMatchObject({
      status: "failed",
      reason: "timeout",
      retry: true,
    });
  });

  it("stops an endless body at the size cap and leaves no multipart upload behind", async () => {
    const { deps, bucket } = await setup({ maxBytes: 11 * MiB });
    const job = await pendingJob(deps, "app-e", "/endless");
    expect(await archiveRecording(job, 1, deps)).toMatchObject({
      status: "failed",
      reason: "too-large",
      retry: false,
    });
    expect(await recordingOf(deps, job)).toMatchObject({ status: "failed", failureReason: "too-large" });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect(listed.KeyCount ?? 0).toBe(0);
    // fauxqs refuses to delete a bucket that still has an in-progress multipart upload.
    await expect(s3.send(new DeleteBucketCommand({ Bucket: bucket }))).resolves.toBeDefined();
  });

  it("above S3's one-request copy limit, keeps size and checksum in a manifest beside the recording, and relinks from it", async () => {
    // Prepare: a copy limit of 1 MiB stands in for S3's 5 GB (a 5 GB file is no test fixture).
    const { deps, bucket } = await setup({ copyLimitBytes: MiB });
    const job = await pendingJob(deps, "app-big", `/recordings/big-${2 * MiB}.mp4`);

    // Act
    const first = await archiveRecording(job, 1, deps);
    const again = await archiveRecording(job, 2, deps);

    // Assess
    expect(first).toMatchObject({
      status: "archived",
      size: 2 * MiB,
      skipped: false,
      sha256: await fileSha256(2 * MiB),
    });
    const key = first.status === "archived" ? first.key : "";
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(head.Metadata?.sha256).toBeUndefined();
    const manifest = JSON.parse(
      (await (
        await s3.send(new GetObjectCommand({ Bucket: bucket, Key: `${key}.manifest.json` }))
      ).Body?.transformToString()) ?? "{}",
    );
    expect(manifest).toMatchObject({
      sha256: await fileSha256(2 * MiB),
      size: String(2 * MiB),
      "source-url": expect.stringContaining("/recordings/big-"),
    });
    expect(again).toMatchObject({ status: "archived", key, skipped: true });
    expect(await recordingOf(deps, job)).toMatchObject({ status: "archived", key, size: 2 * MiB });
  });

  it("archives again when the archived object has disappeared", async () => {
    const { deps, bucket } = await setup();
    const job = await pendingJob(deps, "app-g", `/recordings/again-${MiB}.mp4`);
    const first = await archiveRecording(job, 1, deps);
    if (first.status !== "archived") throw new Error("not archived");
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: first.key }));
    expect(await archiveRecording(job, 2, deps)).toMatchObject({ status: "archived", skipped: false });
    await expect(s3.send(new HeadObjectCommand({ Bucket: bucket, Key: first.key }))).resolves.toBeDefined();
  });
});
