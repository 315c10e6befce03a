// A team's CommonJS consumer (#61 item 11): `require` of the ES-module package, which Node
// ^20.19.0 || >=22.12.0 loads and TypeScript 5.8+ allows under `module: nodenext`. The stream
// package test type-checks it (a .cts file of the scratch project) and runs it: it prints what it
// read of a delivery.
const { parseStreamMessage, STREAM_CONTRACT_VERSION, tableItemId } =
  require("@webhook-backend/stream") as typeof import("@webhook-backend/stream");

const message = parseStreamMessage(
  JSON.stringify({
    schemaVersion: 1,
    kind: "delivery",
    id: "e1@1",
    eventId: "e1",
    receivedAt: 1,
    trigger: "group_created",
    body: "{}",
  }),
);
process.stdout.write(
  JSON.stringify({ kind: message.kind, contract: STREAM_CONTRACT_VERSION, id: tableItemId({ pk: "a#g1" }) }),
);
