/**
 * `npm run contract`: writes the stream's published contract (`streamContract`) under
 * `contract/stream/`, removing a document it no longer makes. Run it after changing a schema of
 * the envelope or of a trigger; `test/unit/stream-contract.test.ts` fails until it is run.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { CONTRACT_DIR, streamContract } from "./stream-contract";

const root = join(new URL("../../", import.meta.url).pathname, CONTRACT_DIR);
const documents = streamContract();

/** Every file under a directory, by its path relative to `root`. */
const filesOf = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesOf(join(dir, entry.name)) : [relative(root, join(dir, entry.name))],
  );

mkdirSync(root, { recursive: true });
for (const stale of filesOf(root).filter((path) => !documents.has(path))) rmSync(join(root, stale));
for (const [path, text] of documents) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}
console.log(`wrote ${documents.size} documents to ${CONTRACT_DIR}/`);
