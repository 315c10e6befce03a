import { type BodyReader, deliveryBody } from "./body.ts";
import type { ErasureNotice, StreamEnvelope } from "./envelope.ts";
import { parseEventBody, refusalOf } from "./events/parse-body.ts";
import { evolveOnce, projectionInput } from "./fold.ts";
import { PROJECTION_TABLE_NAMES, type ProjectionTableName } from "./projections/keys.ts";
import { EXPIRES_AT, PROJECTIONS, type VersionedItem } from "./projections/registry.ts";
import type { ItemKey, ProjectionInput } from "./projections/types.ts";

/**
 * The consumer contract (#41, docs/stream.md): the projections' own fold, exported. Folding
 * every delivery a subscriber received, in any order, with any duplicates and cut into any
 * batches, per item key, gives exactly the fact-derived fields of the four tables (`factFields`).
 */

/** What the backend adds to an item that no delivery says, on every item (docs/stream.md says why). */
export const BOOKKEEPING_FIELDS = ["rev", "seen", "fallback", "known", EXPIRES_AT] as const;

/** The fields of a session's recording the recorder writes (its outcome), not a delivery. */
export const RECORDER_FIELDS = [
  "status",
  "attempts",
  "bucket",
  "key",
  "size",
  "sha256",
  "contentType",
  "archivedAt",
  "failureReason",
  "failureDetail",
] as const;

/** What a session's keyed entry (a recording, a transcript) remembers of its facts (`KeyedFacts`): bookkeeping. */
export const KEYED_FACTS_FIELDS = ["v", "alt"] as const;

/** A session's map of keyed entries without the fields `drop` names. */
function withoutFields(entries: unknown, drop: readonly string[]): unknown {
  if (!entries || typeof entries !== "object") return entries;
  return Object.fromEntries(
    Object.entries(entries as Record<string, Record<string, unknown>>).map(([key, entry]) => {
      const facts = { ...entry };
      for (const name of drop) delete facts[name];
      return [key, facts];
    }),
  );
}

/**
 * The fields of an item that the deliveries determine: the item without the bookkeeping (`rev`,
 * `seen`, `fallback`, `known`, `expiresAt`) and, on a session, without what the recorder wrote of each
 * recording and what each recording and transcript remembers of its facts (`v`, `alt`). What a
 * consumer's copy and the tables agree on, item for item.
 *
 * @example factFields("sessions", session).recordings["1696937627"] // { recordingDate, duration, startTime, sourceUrl }
 */
export function factFields(table: ProjectionTableName, item: object): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...item };
  for (const name of BOOKKEEPING_FIELDS) delete fields[name];
  if (table === "sessions") {
    if (fields.recordings)
      fields.recordings = withoutFields(fields.recordings, [...RECORDER_FIELDS, ...KEYED_FACTS_FIELDS]);
    if (fields.transcripts) fields.transcripts = withoutFields(fields.transcripts, KEYED_FACTS_FIELDS);
  }
  return fields;
}

/** A copy of the four tables: each table's items by `pk|sk`. */
export type TableItems = { [T in ProjectionTableName]: Map<string, VersionedItem> };

/**
 * Folds deliveries into a copy of the tables, in memory: each delivery's body parsed as the
 * projector parses it, applied at its receipt by the projections' own fold (`evolveOnce`, per
 * item in receipt order, as the projector folds a batch). Order, duplicates and batching do not
 * change the result. A delivery whose body is in the bucket is read with `readBody`; notices and
 * unknown triggers change no item.
 *
 * @example await foldDeliveries(envelopes, items, readBody)
 * @throws `readBody`'s error, or when a body is in the bucket and no reader is given
 */
export async function foldDeliveries(
  envelopes: readonly StreamEnvelope[],
  items: TableItems,
  readBody?: BodyReader,
): Promise<void> {
  const inputs: ProjectionInput[] = [];
  for (const envelope of envelopes) {
    if (envelope.kind !== "delivery") continue;
    const parsed = parseEventBody(await deliveryBody(envelope, readBody));
    if (parsed.kind !== "known" || refusalOf(parsed) !== undefined) continue;
    inputs.push(projectionInput(parsed.event, envelope.eventId, envelope.receivedAt));
  }
  inputs.sort((a, b) => a.receivedAt - b.receivedAt || (a.eventId < b.eventId ? -1 : 1));
  for (const table of PROJECTION_TABLE_NAMES) {
    const projection = PROJECTIONS[table] as unknown as Parameters<typeof evolveOnce>[0];
    for (const input of inputs) {
      if (!projection.handles(input.event)) continue;
      for (const key of projection.keys(input) as ItemKey[]) {
        const id = `${key.pk}|${key.sk ?? ""}`;
        items[table].set(id, evolveOnce(projection, input, key)(items[table].get(id) ?? null));
      }
    }
  }
}

/** A consumer's copy of the four tables, in memory. */
export interface StreamCopy {
  /** Each table's items, as the tables hold them (bookkeeping included), by `pk|sk`. */
  items: TableItems;
  /** Folds deliveries (`foldDeliveries`), but those an erasure of their whole app has ended (`drops`). */
  apply(envelopes: readonly StreamEnvelope[]): Promise<void>;
  /** Whether `apply` drops this message: a delivery of an app erased whole, received before the erasure ended. */
  drops(envelope: StreamEnvelope): boolean;
  /** Every item of a table as `factFields`, by `pk|sk`. */
  facts(table: ProjectionTableName): Map<string, Record<string, unknown>>;
  /**
   * Acts on an erasure notice by forgetting every item of its app. For a whole app (`scope:
   * "app"`) that is the erasure, and a delivery of the app received before the erasure ended
   * (published before it, arriving after its notice: nothing is ordered) is dropped from then on.
   * For one user the notice names no one, by design: the app's copy is dropped, to be rebuilt
   * from `replay --to-stream --app` (which publishes the redacted lines) once what was in flight
   * has drained.
   */
  erase(notice: Pick<ErasureNotice, "appId" | "scope" | "finishedAt">): void;
}

/**
 * A copy of the tables kept from the stream, in memory.
 *
 * @example const copy = streamCopy(); await copy.apply(envelopes); copy.facts("groups").get("app1#g1|")
 */
export function streamCopy(readBody?: BodyReader): StreamCopy {
  const items = Object.fromEntries(PROJECTION_TABLE_NAMES.map((t) => [t, new Map()])) as TableItems;
  /** The apps erased whole, and when their erasure ended. */
  const erasedApps = new Map<string, number>();
  const erasedBefore = (e: StreamEnvelope) =>
    e.kind === "delivery" && e.receivedAt <= (erasedApps.get(e.appId ?? "") ?? Number.NEGATIVE_INFINITY);
  return {
    items,
    apply: (envelopes) =>
      foldDeliveries(
        envelopes.filter((e) => !erasedBefore(e)),
        items,
        readBody,
      ),
    drops: erasedBefore,
    facts: (table) => new Map([...items[table]].map(([id, item]) => [id, factFields(table, item)] as const)),
    erase({ appId, scope, finishedAt }) {
      if (scope === "app") erasedApps.set(appId, Math.max(finishedAt, erasedApps.get(appId) ?? finishedAt));
      for (const table of PROJECTION_TABLE_NAMES)
        for (const [id, item] of items[table])
          if ((item as { appId?: string }).appId === appId) items[table].delete(id);
    },
  };
}
