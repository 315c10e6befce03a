import type { ImportKindName } from "./kinds";

/** One entry of an import file as it was written, and where (`line 3`, `entry 3`), to name it in a refusal. */
export interface FileEntry {
  at: string;
  value: unknown;
}

/** The value of a line that is not JSON (refused with its line). */
export const NOT_JSON: unique symbol = Symbol("not JSON");

/** The file is neither JSON nor NDJSON of entries. */
export class ImportFileError extends Error {
  override name = "ImportFileError";
}

/**
 * The entries of an import file, JSON or NDJSON:
 * - NDJSON: one entry a line (blank lines skipped), each named by its line;
 * - JSON: an array of entries, or the request body's own form, `{"users": {<uid>: {…}}}` (or
 *   `{"users": […]}`), each named by its position (or its key).
 * A line that is not JSON is an entry too (refused as such, with its line), so that one bad line
 * costs that line, not the file.
 *
 * @example parseImportFile('{"uid":"u1","name":"Ann"}\n{"uid":"u2","name":"Bo"}\n', "users").length // 2
 * @throws ImportFileError when a JSON file is not one of those forms
 */
export function parseImportFile(text: string, kind: ImportKindName): FileEntry[] {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  let whole: unknown;
  try {
    whole = JSON.parse(trimmed);
  } catch {
    whole = undefined; // NDJSON (or a broken JSON file: each line is judged)
  }
  if (Array.isArray(whole)) return whole.map((value, i) => ({ at: `entry ${i + 1}`, value }));
  if (whole !== null && typeof whole === "object" && kind in whole) {
    const container = (whole as Record<string, unknown>)[kind];
    if (Array.isArray(container)) return container.map((value, i) => ({ at: `entry ${i + 1}`, value }));
    if (container !== null && typeof container === "object")
      return Object.entries(container).map(([key, value]) => ({ at: `"${key}"`, value }));
    throw new ImportFileError(`"${kind}" in the file is neither a list nor an object keyed by id`);
  }
  return text.split("\n").flatMap((line, i) => {
    if (!line.trim()) return [];
    try {
      return [{ at: `line ${i + 1}`, value: JSON.parse(line) as unknown }];
    } catch {
      return [{ at: `line ${i + 1}`, value: NOT_JSON }];
    }
  });
}
