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
  RECORDER_FIELDS,
  type StreamCopy,
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
  PUBLISHED_OUTCOMES,
  parseStreamMessage,
  publishedMessage,
  STREAM_ATTRIBUTES,
  STREAM_CONTRACT,
  STREAM_KINDS,
  STREAM_SCHEMA_VERSION,
  type StreamEnvelope,
  streamAttributesSchema,
  streamMessageSchema,
} from "./envelope.ts";
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
export { PROJECTION_TABLE_NAMES, type ProjectionTableName } from "./projections/keys.ts";
export {
  type DeliveryIdStore,
  memoryDeliveryIdStore,
  type StreamBatchOptions,
  type StreamBatchResponse,
  type StreamQueueEvent,
  type StreamQueueRecord,
  streamBatchProcessor,
} from "./sqs-batch.ts";
