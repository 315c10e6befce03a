/** A message for a queue: the body, its string/number attributes, and the tenant it belongs to. */
export interface QueueMessage {
  body: string;
  attributes: Record<string, string | number>;
  /**
   * The tenant (the app) the message belongs to: SQS's `MessageGroupId`, which on a standard queue
   * makes it a fair queue (a tenant with a backlog waits, the others keep a low dwell time; no
   * ordering, no extra price). `messageGroupOf` in `contracts/queue-messages` derives it.
   */
  groupId?: string;
}

/** Durable hand-off of a message. Resolves only once the queue has accepted it. Adapter: `adapters/sqs-message-queue`. */
export interface MessageQueue {
  send(message: QueueMessage): Promise<void>;
}
