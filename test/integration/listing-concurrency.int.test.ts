import { describe, expect, it } from "vitest";
import { LISTINGS_AT_ONCE } from "../../shared/adapters/s3-listing";
import { duckDbEngine } from "../../shared/analytics/engines/duckdb-sql-engine";
import { createBucket, testClients, uniqueName } from "../support/aws";

/**
 * An engine query over a long range lists its days a few at a time (#61, item 4): `forget`'s
 * search over a year of days listed every day at once, and the SDK warned "socket usage at
 * capacity=50 and 441 additional requests are enqueued". On fauxqs's S3, the requests in flight
 * counted by a middleware on the client.
 */
describe("listing a range of days", () => {
  it("keeps at most LISTINGS_AT_ONCE listings in flight, well under the SDK's 50 sockets", async () => {
    // Prepare: an empty bucket (every day is one listing) and a client that counts its requests in flight.
    const { s3 } = testClients();
    const bucket = await createBucket(s3, uniqueName("listing"));
    let inFlight = 0;
    let most = 0;
    s3.middlewareStack.add(
      (next) => async (args) => {
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          return await next(args);
        } finally {
          inFlight--;
        }
      },
      { step: "initialize", name: "countInFlight" },
    );

    // Act: a year of days, the archive and its edges, as a search's chunk reads them.
    const range = { from: "2025-11-01", to: "2026-10-31" };
    const result = await duckDbEngine({ s3, bucket }).query(
      "SELECT count(*) AS n FROM archive_events",
      {},
      {
        ...range,
        edges: range,
      },
    );

    // Assess
    expect(result.rows).toEqual([{ n: 0 }]);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(LISTINGS_AT_ONCE);
  });
});
