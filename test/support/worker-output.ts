// Each test worker's direct writes to its stdout and stderr, routed into vitest's console capture
// (issue #56). Powertools' Logger and Metrics write through a Console of their own on
// process.stdout (not the global console vitest captures), and so do the ingest's hand-written
// lines (shared/platform/log-lines.ts): in a forked worker they went straight to the terminal, 572
// of a run's 1,549 lines. Routed here, each line belongs to the test that wrote it, and
// `silent: "passed-only"` (vitest.config.ts) prints it only when that test fails. A test that
// reads the lines replaces `write` itself (a spy, or sinks of its own) and restores this one.

/** Replaces `stream.write` by `log`, keeping write's contract (true, and the callback called). */
function route(stream: NodeJS.WriteStream, log: (text: string) => void) {
  stream.write = ((chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
    const text =
      typeof chunk === "string"
        ? chunk
        : Buffer.from(chunk).toString(typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
    log(text.endsWith("\n") ? text.slice(0, -1) : text);
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") queueMicrotask(() => done());
    return true;
  }) as typeof stream.write;
}

route(process.stdout, (text) => console.log("%s", text));
route(process.stderr, (text) => console.error("%s", text));
