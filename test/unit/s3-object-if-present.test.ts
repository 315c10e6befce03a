import { Readable } from "node:stream";
import { AthenaClient } from "@aws-sdk/client-athena";
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { s3BlobStore } from "../../shared/adapters/s3-blob-store";
import { getObjectIfPresent } from "../../shared/adapters/s3-object-if-present";
import { athenaCompactor } from "../../shared/analytics/engines/athena-compactor";
import { blobRollupLedger, dayPassKey } from "../../shared/analytics/store/rollup-ledger";
import { StorageError } from "../../shared/platform/errors";

/**
 * S3 as a role without an effective `s3:ListBucket` sees it: a GetObject of a key that does not
 * exist answers 403 AccessDenied, not 404 NoSuchKey (GetObject's reference). No emulator answers
 * so (fauxqs and every S3 stand-in answer 404 whatever the caller may do: they enforce no IAM), so
 * these tests run the real SDK client over a stub HTTP handler that answers as S3 does: XML
 * errors and listings, parsed by the SDK's own deserializers, so the error names are the SDK's.
 */
function s3As(options: {
  /** The bucket's objects. */
  objects: Record<string, string>;
  /** Keys whose GetObject is refused although they exist (a real denial). */
  denied?: string[];
  /** Whether a ListObjectsV2 is refused too (no ListBucket at all). */
  listDenied?: boolean;
  /** Whether a missing key answers 404 (the role has ListBucket) instead of 403. */
  missingIs404?: boolean;
}) {
  const requests: string[] = [];
  const answer = (statusCode: number, body: string) => ({
    response: {
      statusCode,
      reason: undefined,
      headers: { "content-type": "application/xml" },
      body: Readable.from([Buffer.from(body)]),
    },
  });
  const error = (status: number, code: string) =>
    answer(status, `<?xml version="1.0"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
  const client = new S3Client({
    region: "eu-west-1",
    endpoint: "http://s3.stub",
    forcePathStyle: true,
    credentials: { accessKeyId: "k", secretAccessKey: "s" },
    requestHandler: {
      async handle(request: { method: string; path: string; query?: Record<string, unknown> }) {
        const key = decodeURIComponent(request.path.replace(/^\/bucket\/?/, ""));
        const prefix = typeof request.query?.prefix === "string" ? request.query.prefix : undefined;
        if (request.query?.["list-type"] === "2") {
          requests.push(`ListObjectsV2 ${prefix}`);
          if (options.listDenied) return error(403, "AccessDenied");
          const keys = Object.keys(options.objects)
            .filter((k) => k.startsWith(prefix ?? ""))
            .sort()
            .slice(0, Number(request.query["max-keys"] ?? 1000));
          const contents = keys.map((k) => `<Contents><Key>${k}</Key><Size>1</Size></Contents>`).join("");
          return answer(
            200,
            `<?xml version="1.0"?><ListBucketResult><Name>bucket</Name><KeyCount>${keys.length}</KeyCount>${contents}</ListBucketResult>`,
          );
        }
        requests.push(`GetObject ${key}`);
        const body = options.objects[key];
        if (body === undefined || options.denied?.includes(key))
          return options.missingIs404 && body === undefined
            ? error(404, "NoSuchKey")
            : error(403, "AccessDenied");
        return {
          response: {
            statusCode: 200,
            reason: undefined,
            headers: {},
            body: Readable.from([Buffer.from(body)]),
          },
        };
      },
    },
  });
  return { client, requests };
}

describe("getObjectIfPresent: a missing object reads as absent whether S3 answers 404 or 403", () => {
  it("reads a 403 for a missing key as absent once a listing of that exact key shows nothing", async () => {
    // Prepare: a key that sorts right after the one asked for, so a listing by prefix finds it.
    const { client, requests } = s3As({ objects: { "rollup/date=2026-01-02.json.bak": "x" } });

    // Act
    const read = await getObjectIfPresent(client, "bucket", "rollup/date=2026-01-02.json");

    // Assess: absent, confirmed by one listing of that key's prefix, one key at most.
    expect(read).toBeUndefined();
    expect(requests).toEqual([
      "GetObject rollup/date=2026-01-02.json",
      "ListObjectsV2 rollup/date=2026-01-02.json",
    ]);
  });

  it("throws the refusal of a key that exists (a real denial), with S3's own error name", async () => {
    const key = "compact/date=2026-01-02/manifest.json";
    const { client } = s3As({ objects: { [key]: "{}" }, denied: [key] });

    await expect(getObjectIfPresent(client, "bucket", key)).rejects.toMatchObject({ name: "AccessDenied" });
    // The SDK names S3's 403 AccessDenied: what the helper tells from NoSuchKey.
    await expect(client.send(new GetObjectCommand({ Bucket: "bucket", Key: key }))).rejects.toMatchObject({
      name: "AccessDenied",
      $metadata: { httpStatusCode: 403 },
    });
  });

  it("says that both reads were refused when the listing is refused too", async () => {
    const { client } = s3As({ objects: {}, listDenied: true });

    const read = getObjectIfPresent(client, "bucket", "users/date=2026-01-02/users.ndjson.gz");

    await expect(read).rejects.toThrow(StorageError);
    await expect(read).rejects.toThrow(/GetObject and ListObjectsV2 of that key were both refused/);
  });

  it("reads a 404 as absent without a listing, and an object's bytes as they are", async () => {
    const { client, requests } = s3As({ objects: { "users/a": "bytes" }, missingIs404: true });

    expect(await getObjectIfPresent(client, "bucket", "users/b")).toBeUndefined();
    expect(new TextDecoder().decode(await getObjectIfPresent(client, "bucket", "users/a"))).toBe("bytes");
    expect(requests).toEqual(["GetObject users/b", "GetObject users/a"]);
  });
});

describe("the reads that take a missing object as absent, on a role S3 answers 403 for a missing key", () => {
  it("the rollup ledger reads a day never passed over as undefined (not a failed pass)", async () => {
    const { client } = s3As({ objects: {} });

    const pass = await blobRollupLedger(s3BlobStore(client, "bucket")).pass("2026-01-02");

    expect(pass).toBeUndefined();
  });

  it("the rollup ledger still throws a refused read of a day that has a pass", async () => {
    const { client } = s3As({
      objects: { [dayPassKey("2026-01-02")]: "{}" },
      denied: [dayPassKey("2026-01-02")],
    });

    await expect(blobRollupLedger(s3BlobStore(client, "bucket")).pass("2026-01-02")).rejects.toMatchObject({
      name: "AccessDenied",
    });
  });

  it("the Athena compactor's stopDay reads a listed marker refused as a denial, not as no marker", async () => {
    // A marker listed under the day but refused: a real denial must not be taken for "no query".
    const marker = `compact/date=2026-01-02/${"a".repeat(32)}.ctas.json`;
    const { client } = s3As({ objects: { [marker]: "{}" }, denied: [marker] });
    const compactor = athenaCompactor({
      client: new AthenaClient({
        region: "eu-west-1",
        credentials: { accessKeyId: "k", secretAccessKey: "s" },
      }),
      workGroup: "wg",
      database: "db",
      s3: client,
      bucket: "bucket",
    });

    await expect(compactor.stopDay?.("2026-01-02")).rejects.toMatchObject({ name: "AccessDenied" });
  });
});
