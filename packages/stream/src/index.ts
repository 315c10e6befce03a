/**
 * @webhook-backend/stream: what a service consuming the webhook backend's stream of facts needs
 * (docs/stream.md): the envelope's zod schemas and types, `parseStreamMessage` (raw or SNS-wrapped),
 * the fold into a copy of the four tables (`streamCopy`, `factFields`), the body reader, the SNS
 * filter-policy evaluator and an SQS batch helper. The event schemas (`./events/schemas`, one per
 * trigger), the projections (`./projections/<table>`) and the fold of one item (`./fold`) are
 * subpaths of their own. The S3 body reader is
 * `@webhook-backend/stream/s3` (it needs `@aws-sdk/client-s3`). Importing it changes nothing in
 * the host's zod: parses carry their English messages themselves.
 */
export { type BodyReader, deliveryBody } from "./body.ts";
export {
  BOOKKEEPING_FIELDS,
  factFields,
  foldDeliveries,
  isFact,
  RECORDER_FIELDS,
  type StreamCopy,
  type StreamCopyOptions,
  streamCopy,
  type TableItems,
} from "./copy.ts";
export {
  type BodyObject,
  bodyObjectSchema,
  type DeliveryEnvelope,
  deliveryEnvelopeSchema,
  deliveryId,
  ERASURE_NOTICE_TRIGGER,
  type ErasureNotice,
  erasureNoticeSchema,
  type FactEnvelope,
  PUBLISHED_OUTCOMES,
  parseStreamMessage,
  publishedMessage,
  type ReconcileFact,
  reconcileFactSchema,
  STREAM_ATTRIBUTES,
  STREAM_CONTRACT,
  STREAM_CONTRACT_VERSION,
  STREAM_KINDS,
  STREAM_SCHEMA_VERSION,
  type StreamEnvelope,
  streamAttributesSchema,
  streamMessageSchema,
  UnknownStreamMessageError,
} from "./envelope.ts";
export {
  type AppErasures,
  type ErasureStateStore,
  handledKey,
  memoryErasureState,
} from "./erasure-state.ts";
export { BackendError, ContractViolationError } from "./errors.ts";
export { KNOWN_TRIGGERS, type KnownEvent, type ParsedEvent, type Trigger } from "./events/schemas.ts";
export {
  type FilterPolicy,
  FilterPolicyUnsupportedError,
  parseFilterPolicy,
  policyAdmits,
  type StringCondition,
} from "./filter-policy.ts";
export { ENGLISH, parseContract } from "./parse.ts";
export {
  PROJECTION_TABLE_NAMES,
  type ProjectionTableName,
  TABLE_KEYS,
  tableItemId,
} from "./projections/keys.ts";
export { isOwnItemOfErased, isPseudonym, PSEUDONYM_PREFIX } from "./projections/own-items.ts";
export {
  type DeliveryIdStore,
  memoryDeliveryIdStore,
  type SkippedStreamMessage,
  type StreamBatchOptions,
  type StreamBatchResponse,
  type StreamQueueEvent,
  type StreamQueueRecord,
  streamBatchProcessor,
} from "./sqs-batch.ts";
