/** A message for a queue: the body and its string/number attributes. */
export interface QueueMessage {
  body: string;
  attributes: Record<string, string | number>;
}

/** Durable hand-off of a message. Resolves only once the queue has accepted it. Adapter: `adapters/sqs-message-queue`. */
export interface MessageQueue {
  send(message: QueueMessage): Promise<void>;
}
