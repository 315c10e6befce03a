/**
 * fauxqs in a process of its own, on loopback, in memory:
 * `node --import tsx tools/local/fauxqs-process.ts <port>` (started by `startFauxqsProcess`).
 * Stops on SIGTERM or SIGINT, or when its parent goes away.
 */
import { startFauxqsEmulator } from "./emulators";

const emulator = await startFauxqsEmulator({ port: Number(process.argv[2] ?? 0) });
const stop = () => void emulator.stop().finally(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
process.once("disconnect", stop);
