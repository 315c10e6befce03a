import type { ErasureNotice, FactEnvelope } from "./envelope.ts";

/**
 * What a consumer keeps of the erasure notices it acted on, per app (#57 item 6, #61 item 13):
 * the end of a whole app's erasure (its deliveries received before are dropped, however late they
 * arrive) and the notices acted on (a delivery handled before the latest is new again after it:
 * the replay that rebuilds a copy after an erasure reuses the delivery ids). Kept in memory it
 * lasts as long as the process (a warm Lambda container): give `streamBatchProcessor` a durable
 * `ErasureStateStore`, as you give it a durable `DeliveryIdStore`.
 */

/** One app's erasures, as acted on. */
export interface AppErasures {
  /** A whole app's erasure ended then (epoch ms): every delivery of the app received until then is dropped. */
  erasedBefore?: number;
  /** The ids of the app's erasure notices acted on, in the order acted on (each once). */
  notices?: string[];
}

/** Where the erasures acted on are kept, per app: in memory (`memoryErasureState`) or durably (yours). */
export interface ErasureStateStore {
  get(appId: string): AppErasures | undefined | Promise<AppErasures | undefined>;
  set(appId: string, erasures: AppErasures): void | Promise<void>;
}

/**
 * An app's erasures once a notice is acted on: a whole app's end kept (the latest), the notice's
 * id added once.
 *
 * @example actedOn(undefined, { id: "e1", appId: "app1", scope: "app", finishedAt: 5 }) // { erasedBefore: 5, notices: ["e1"] }
 */
export function actedOn(
  before: AppErasures | undefined,
  notice: Pick<ErasureNotice, "scope" | "finishedAt"> & Partial<Pick<ErasureNotice, "id">>,
): AppErasures {
  const notices = before?.notices ?? [];
  const erasedBefore =
    notice.scope === "app"
      ? Math.max(notice.finishedAt, before?.erasedBefore ?? notice.finishedAt)
      : before?.erasedBefore;
  return {
    ...(erasedBefore === undefined ? {} : { erasedBefore }),
    notices: notice.id === undefined || notices.includes(notice.id) ? notices : [...notices, notice.id],
  };
}

/**
 * Erasure state in memory (a map you may keep and give back).
 *
 * @example streamBatchProcessor({ onDelivery, erasures: memoryErasureState() })
 */
export function memoryErasureState(apps = new Map<string, AppErasures>()): ErasureStateStore {
  return { get: (appId) => apps.get(appId), set: (appId, erasures) => void apps.set(appId, erasures) };
}

/**
 * Whether a whole app's erasure drops this fact: received before it ended.
 *
 * @example erasedBefore(delivery, { erasedBefore: 5 }) // true when delivery.receivedAt <= 5
 */
export function erasedBefore(fact: FactEnvelope, erasures: AppErasures | undefined): boolean {
  return fact.receivedAt <= (erasures?.erasedBefore ?? Number.NEGATIVE_INFINITY);
}

/**
 * The key a `DeliveryIdStore` holds a fact under: its delivery id, and the latest erasure of its
 * app acted on when there is one. A delivery handled before an erasure is new after it: the
 * replay that rebuilds a copy after the erasure (the redacted lines and the others, with their
 * ids) is handled, never taken for a duplicate of what the erasure made void.
 *
 * @example handledKey(delivery, { notices: ["e1"] }) // "5f0c…@1763000000300#e1"
 */
export function handledKey(fact: Pick<FactEnvelope, "id">, erasures: AppErasures | undefined): string {
  const latest = erasures?.notices?.at(-1);
  return latest === undefined ? fact.id : `${fact.id}#${latest}`;
}
