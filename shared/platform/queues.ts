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
 * Batches of 100 with a 1 s window: the projector folds a batch (each item read once, written at
 * most once) and archives it in one object per app and day, so the batch is the unit of cost
 * (bench:projector, bench:cost). Under load batches fill before the window closes; at low traffic
 * an event waits at most the window.
 */
export const EVENTS_QUEUE: QueueDefinition = {
  id: "Events",
  name: "events",
  consumerTimeoutSeconds: 30,
  maxReceiveCount: 5,
  batchSize: 100,
  batchingWindowSeconds: 1,
};

export const RECORDINGS_QUEUE: QueueDefinition = {
  id: "Recordings",
  name: "recordings",
  consumerTimeoutSeconds: 900,
  maxReceiveCount: 3,
  batchSize: 1,
  batchingWindowSeconds: 0,
};
