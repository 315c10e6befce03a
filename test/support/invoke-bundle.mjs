// Runs a bundled handler as Lambda does, in this fresh process: imports `<bundle>/index.mjs` and
// calls its handler with each event of the JSON file given, in order, and a context. Prints one JSON line per
// event, `{"response", "loaded"}`: the handler's answer and the files loaded so far (recorded by a
// module hook), among the handler's own log and metric lines,
// so that a test sees which chunks a request made the function load.
// Usage: node invoke-bundle.mjs <handler file> <events.json>
import { readFileSync } from "node:fs";
import { registerHooks } from "node:module";
import { pathToFileURL } from "node:url";

const [handlerFile, eventsFile] = process.argv.slice(2);
const loaded = [];
registerHooks({
  load(url, context, next) {
    if (url.startsWith("file:")) loaded.push(url);
    return next(url, context);
  },
});
const { handler } = await import(pathToFileURL(handlerFile).href);
// The parts of Lambda's context the handlers read: a fresh invocation's whole timeout ahead.
const context = { awsRequestId: "invoke-bundle", getRemainingTimeInMillis: () => 600_000 };
for (const event of JSON.parse(readFileSync(eventsFile, "utf8"))) {
  const response = await handler(event, context);
  console.log(JSON.stringify({ response, loaded }));
}
