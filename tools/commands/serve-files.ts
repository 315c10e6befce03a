/** Runs the recording file server on its own: `tsx tools/commands/serve-files.ts [port]`. */
import { startFileServer } from "../simulate/file-server";

const server = await startFileServer({ port: Number(process.argv[2] ?? 0) });
console.log(JSON.stringify({ url: server.url, port: server.port }));
const stop = () => void server.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
