import { memoryItemStore } from "../adapters/memory-item-store";
import { parseEventBody, refusalOf } from "../events/parse-body";
import { PROJECTION_TABLE_NAMES, type ProjectionTableName } from "../platform/tables";
import type { ProjectionInput } from "../projections/types";
import {
  type ProjectionStores,
  type ProjectorDependencies,
  projectInputs,
  projectionInput,
} from "../projector/core";
import { EXPIRES_AT } from "../projector/expiry";
import { storesByTable, type VersionedItem } from "../projector/registry";
import type { BodyObject, DeliveryEnvelope, ErasureNotice, StreamEnvelope } from "./envelope";

/**
 * The consumer contract (#41, docs/stream.md): the projections' own fold, exported. Folding
 * every delivery a subscriber received, in any order, with any duplicates and cut into any
 * batches, per item key, gives exactly the fact-derived fields of the four tables (`factFields`).
 * A consumer keeps its copy in any `ItemStore` (these are the projector's stores' semantics),
 * in memory by default.
 */

/** What the backend adds to an item that no delivery says, on every item (docs/stream.md says why). */
export const BOOKKEEPING_FIELDS = ["rev", "seen", "fallback", EXPIRES_AT] as const;

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

/**
 * The fields of an item that the deliveries determine: the item without the bookkeeping (`rev`,
 * `seen`, `fallback`, `expiresAt`) and, on a session, without what the recorder wrote of each
 * recording. What a consumer's copy and the tables agree on, item for item.
 *
 * @example factFields("sessions", session).recordings["1696937627"] // { recordingDate, duration, startTime, sourceUrl }
 */
export function factFields(table: ProjectionTableName, item: object): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...item };
  for (const name of BOOKKEEPING_FIELDS) delete fields[name];
  if (table === "sessions" && fields.recordings && typeof fields.recordings === "object")
    fields.recordings = Object.fromEntries(
      Object.entries(fields.recordings as Record<string, Record<string, unknown>>).map(
        ([start, recording]) => {
          const facts = { ...recording };
          for (const name of RECORDER_FIELDS) delete facts[name];
          return [start, facts];
        },
      ),
    );
  return fields;
}

/** Reads a body the envelope points to (`bodyObject`: past SNS's 256 KiB), e.g. with `s3:GetObject`. */
export type BodyReader = (object: BodyObject) => Promise<string>;

/** The deps the fold needs: the stores; no archive, no recording jobs, no clock (the envelope has the times). */
function foldDeps(stores: ProjectionStores): ProjectorDependencies {
  const unused = async (): Promise<never> => {
    throw new Error("a stream consumer's fold reads no archive");
  };
  return {
    stores,
    dataStore: { bucket: "", put: unused, getText: unused, getBytes: unused, getBytesIfPresent: unused },
    recordingJobs: { send: async () => undefined },
    now: () => 0,
  };
}

/**
 * Folds deliveries into a copy of the tables: each delivery's body parsed as the projector parses
 * it, applied at its receipt by the projector's own fold (`projectInputs`), every item read once
 * and written at most once. Order, duplicates and batching do not change the result. A delivery
 * whose body is in the bucket is read with `readBody`; notices and unknown triggers change no item.
 *
 * @example await foldDeliveries(envelopes, copy.stores, readBody)
 * @throws the first item's failure (an in-memory store has none), or `readBody`'s
 */
export async function foldDeliveries(
  envelopes: readonly StreamEnvelope[],
  stores: ProjectionStores,
  readBody?: BodyReader,
): Promise<void> {
  const inputs: ProjectionInput[] = [];
  for (const envelope of envelopes) {
    if (envelope.kind !== "delivery") continue;
    const parsed = parseEventBody(await bodyOf(envelope, readBody));
    if (parsed.kind !== "known" || refusalOf(parsed) !== undefined) continue;
    inputs.push(projectionInput(parsed.event, envelope.eventId, envelope.receivedAt));
  }
  for (const result of await projectInputs(inputs, foldDeps(stores)))
    if ("error" in result) throw result.error;
}

async function bodyOf(envelope: DeliveryEnvelope, readBody: BodyReader | undefined): Promise<string> {
  if (envelope.body !== undefined) return envelope.body;
  if (!envelope.bodyObject) throw new Error(`delivery ${envelope.id} has neither a body nor a body object`);
  if (!readBody) throw new Error(`delivery ${envelope.id}'s body is in the bucket: give the fold a readBody`);
  return readBody(envelope.bodyObject);
}

/** A consumer's copy of the four tables, in memory. */
export interface StreamCopy {
  stores: ProjectionStores & { [T in ProjectionTableName]: { items: Map<string, VersionedItem> } };
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
 * A copy of the tables kept from the stream, in memory: what the worked consumer
 * (`example-consumer.ts`) and the contract's tests use.
 *
 * @example const copy = streamCopy(); await copy.apply(envelopes); copy.facts("groups").get("app1#g1|")
 */
export function streamCopy(readBody?: BodyReader): StreamCopy {
  const stores = storesByTable(() => memoryItemStore<VersionedItem>()) as StreamCopy["stores"];
  /** The apps erased whole, and when their erasure ended. */
  const erasedApps = new Map<string, number>();
  const erasedBefore = (e: StreamEnvelope) =>
    e.kind === "delivery" && e.receivedAt <= (erasedApps.get(e.appId ?? "") ?? Number.NEGATIVE_INFINITY);
  return {
    stores,
    apply: (envelopes) =>
      foldDeliveries(
        envelopes.filter((e) => !erasedBefore(e)),
        stores,
        readBody,
      ),
    drops: erasedBefore,
    facts: (table) =>
      new Map([...stores[table].items].map(([id, item]) => [id, factFields(table, item)] as const)),
    erase({ appId, scope, finishedAt }) {
      if (scope === "app") erasedApps.set(appId, Math.max(finishedAt, erasedApps.get(appId) ?? finishedAt));
      for (const table of PROJECTION_TABLE_NAMES)
        for (const [id, item] of stores[table].items)
          if ((item as { appId?: string }).appId === appId) stores[table].items.delete(id);
    },
  };
}
