/**
 * bench:cost's closing table: the one-app run, the same events over BENCH_APPS apps and the
 * one-app run with the stream on, side by side, and what the stream adds per million events.
 */
import { reportLine, reportTable } from "./doc-block";
import { APPS, EVENTS } from "./model";
import type { measure } from "./run";

/** One app and APPS apps side by side, and one app with the stream on (#41). */
export function printSideBySide(
  one: Awaited<ReturnType<typeof measure>>,
  many: Awaited<ReturnType<typeof measure>>,
  streamed: Awaited<ReturnType<typeof measure>>,
) {
  reportTable(
    `one app and ${APPS} apps side by side, the same ${EVENTS} events; and one app with the stream on:`,
    [
      { run: "1 app", ...one },
      { run: `${APPS} apps`, ...many },
      { run: "1 app, stream on (1 subscriber)", ...streamed },
    ].map((r) => ({
      run: r.run,
      "apps that sent": r.apps,
      deliveries: r.deliveries,
      "S3 PUTs per delivery": Number(r.s3PutsPerDelivery.toFixed(4)),
      "DynamoDB write units per event": Number(r.writeUnitsPerEvent.toFixed(3)),
      "publishes per event": Number(r.publishRequestsPerEvent.toFixed(4)),
      "64 KiB chunks per event": Number(r.chunksPerEvent.toFixed(4)),
      "entries per publish (of 10)": Number(r.batchFill.toFixed(1)),
      "$ per million events": Number(r.usdPerMillion.toFixed(2)),
      "… as counted before #59": Number(r.usdCountedBefore.toFixed(2)),
      "of which the stream": Number(r.streamUsdPerMillion.toFixed(3)),
    })),
  );
  reportLine(
    `the stream adds $${streamed.streamUsdPerMillion.toFixed(3)} per million events with one subscriber (target ≤ $0.10; SNS bills per 64 KiB chunk of a publish, delivery to SQS is free, so more subscribers cost the same), $${one.streamUsdPerMillion.toFixed(3)} with none`,
  );
}
