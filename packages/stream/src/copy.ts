import { type BodyReader, deliveryBody } from "./body.ts";
import type { ErasureNotice, FactEnvelope, StreamEnvelope } from "./envelope.ts";
import { type AppErasures, actedOn, erasedBefore } from "./erasure-state.ts";
import { parseEventBody, refusalOf } from "./events/parse-body.ts";
import { evolveOnce, projectionInput } from "./fold.ts";
import { PROJECTION_TABLE_NAMES, type ProjectionTableName, tableItemId } from "./projections/keys.ts";
import { isOwnItemOfErased, isPseudonym } from "./projections/own-items.ts";
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

/**
 * An item as DynamoDB holds it: a field the fold left `undefined` (a presence item's
 * `onlineShard` while offline, a `userAgent` the fact did not carry) is absent, at every depth,
 * so that a copy's item deep-equals the table's.
 */
function withoutUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutUndefined) as T;
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value))
    if (field !== undefined) out[name] = withoutUndefined(field);
  return out as T;
}

/** A copy of the four tables: each table's items by `pk|sk` (`tableItemId`; memberships' sort key is `uid`). */
export type TableItems = { [T in ProjectionTableName]: Map<string, VersionedItem> };

/**
 * Folds deliveries into a copy of the tables, in memory: each delivery's body parsed as the
 * projector parses it, applied at its receipt by the projections' own fold (`evolveOnce`, per
 * item in receipt order, as the projector folds a batch). Order, duplicates and batching do not
 * change the result. A reconcile fact is folded as a delivery. A delivery an erasure redacted
 * (`erasure` set) writes no own item of a pseudonym (`isOwnItemOfErased`, as the projector). A
 * delivery whose body is in the bucket is read with `readBody`; notices and unknown triggers
 * change no item; a field left undefined is absent.
 *
 * @example await foldDeliveries(envelopes, items, readBody)
 * @throws `readBody`'s error, or when a body is in the bucket and no reader is given
 */
export async function foldDeliveries(
  envelopes: readonly StreamEnvelope[],
  items: TableItems,
  readBody?: BodyReader,
): Promise<void> {
  const inputs: Array<{ input: ProjectionInput; redacted: boolean }> = [];
  for (const envelope of envelopes) {
    if (!isFact(envelope)) continue;
    const parsed = parseEventBody(await deliveryBody(envelope, readBody));
    if (parsed.kind !== "known" || refusalOf(parsed) !== undefined) continue;
    inputs.push({
      input: projectionInput(parsed.event, envelope.eventId, envelope.receivedAt),
      redacted: envelope.erasure !== undefined,
    });
  }
  inputs.sort(
    ({ input: a }, { input: b }) => a.receivedAt - b.receivedAt || (a.eventId < b.eventId ? -1 : 1),
  );
  for (const table of PROJECTION_TABLE_NAMES) {
    const projection = PROJECTIONS[table] as unknown as Parameters<typeof evolveOnce>[0];
    for (const { input, redacted } of inputs) {
      if (!projection.handles(input.event)) continue;
      for (const key of projection.keys(input) as ItemKey[]) {
        if (redacted && isOwnItemOfErased(table, key, input.event.appId, isPseudonym)) continue;
        const id = tableItemId(key);
        items[table].set(
          id,
          withoutUndefined(evolveOnce(projection, input, key)(items[table].get(id) ?? null)),
        );
      }
    }
  }
}

/** Whether a message carries a fact the copy folds: a delivery, or a reconcile fact. */
export function isFact(envelope: { kind: string }): envelope is FactEnvelope {
  return envelope.kind === "delivery" || envelope.kind === "reconcile";
}

/** A consumer's copy of the four tables, in memory. */
export interface StreamCopy {
  /** Each table's items, as the tables hold them (bookkeeping included), by `pk|sk`. */
  items: TableItems;
  /** Folds deliveries (`foldDeliveries`), but those an erasure of their whole app has ended (`drops`). */
  apply(envelopes: readonly StreamEnvelope[]): Promise<void>;
  /** Whether `apply` drops this message: a delivery of an app erased whole, received before the erasure ended. */
  drops(envelope: StreamEnvelope): boolean;
  /**
   * The erasures the copy acted on, by app: what to keep beside `items` when you persist the
   * copy (a cold start forgets both), and give back to `streamCopy(readBody, { items, erasures })`.
   */
  erasures: Map<string, AppErasures>;
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
  erase(
    notice: Pick<ErasureNotice, "appId" | "scope" | "finishedAt"> & Partial<Pick<ErasureNotice, "id">>,
  ): void;
}

/** What a copy starts from: one persisted by a consumer (`items` and `erasures`, kept together). */
export interface StreamCopyOptions {
  /** The copy's items as a consumer persisted them. @default empty */
  items?: TableItems;
  /** The erasures the copy acted on, persisted with its items. @default none */
  erasures?: Map<string, AppErasures>;
}

/**
 * A copy of the tables kept from the stream, in memory.
 *
 * Everything it holds is in memory, for the life of the process: a consumer that keeps a copy
 * across cold starts persists `items` and `erasures` together and starts from them.
 *
 * @example const copy = streamCopy(); await copy.apply(envelopes); copy.facts("groups").get("app1#g1|")
 */
export function streamCopy(readBody?: BodyReader, options: StreamCopyOptions = {}): StreamCopy {
  const items =
    options.items ?? (Object.fromEntries(PROJECTION_TABLE_NAMES.map((t) => [t, new Map()])) as TableItems);
  const erasures = options.erasures ?? new Map<string, AppErasures>();
  const dropped = (e: StreamEnvelope) => isFact(e) && erasedBefore(e, erasures.get(e.appId ?? ""));
  return {
    items,
    erasures,
    apply: (envelopes) =>
      foldDeliveries(
        envelopes.filter((e) => !dropped(e)),
        items,
        readBody,
      ),
    drops: dropped,
    facts: (table) => new Map([...items[table]].map(([id, item]) => [id, factFields(table, item)] as const)),
    erase(notice) {
      const { appId } = notice;
      erasures.set(appId, actedOn(erasures.get(appId), notice));
      for (const table of PROJECTION_TABLE_NAMES)
        for (const [id, item] of items[table])
          if ((item as { appId?: string }).appId === appId) items[table].delete(id);
    },
  };
}
