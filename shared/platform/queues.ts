/**
 * The two queues, defined once: the CDK app and the local stack build them from this.
 * Visibility timeout = `VISIBILITY_FACTOR` × the consumer's timeout (AWS's guidance for Lambda
 * event sources, so a message is not redelivered while a slow batch still runs).
 */
export const VISIBILITY_FACTOR = 6;

export interface QueueDefinition {
  /** Logical id: the CDK construct id, and the local queue name. */
  id: "Events" | "Recordings";
  name: string;
  /** The consumer function's timeout, seconds. */
  consumerTimeoutSeconds: number;
  /** Receives before a message moves to the DLQ. */
  maxReceiveCount: number;
  /** Records per batch handed to the consumer. */
  batchSize: number;
  /** How long to gather a batch, seconds. */
  batchingWindowSeconds: number;
}

/**
 * Batches of 200 with a 2 s window, chosen by bench:projector: the projector folds a batch (each
 * item read once, written at most once) and archives it in one object per app and day, so the
 * batch is the unit of cost. At the default API rate (500 events/s, shared by the event source's
 * five batches in the making) a batch of 200 fills in 2 s, and an event is on the table ~1.3 s
 * after its acknowledgement at p50 (0.58 write units per delivery, against 0.66 at batch 100 and
 * 0.7 s); batch 300 would leave under 0.5 s of the 2 s aimed at for processing. At low traffic an
 * event waits at most the window.
 */
export const EVENTS_QUEUE: QueueDefinition = {
  id: "Events",
  name: "events",
  consumerTimeoutSeconds: 30,
  maxReceiveCount: 5,
  batchSize: 200,
  batchingWindowSeconds: 2,
};

export const RECORDINGS_QUEUE: QueueDefinition = {
  id: "Recordings",
  name: "recordings",
  consumerTimeoutSeconds: 900,
  maxReceiveCount: 5,
  batchSize: 1,
  batchingWindowSeconds: 0,
};
