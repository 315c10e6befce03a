import { Duration, RemovalPolicy, Validations } from "aws-cdk-lib";
import { Queue, QueueEncryption } from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";

export interface QueueWithDeadLetterProps {
  /** At least 6 × the consumer's timeout (AWS's guidance for Lambda event sources). */
  readonly visibilityTimeout: Duration;
  /** Receives before a message moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
  /** @default 4 days (the DLQ keeps 14) */
  readonly retentionPeriod?: Duration;
  /**
   * How long the dead-letter queue keeps a message (at most 14 days, SQS's maximum), counted from
   * the message's first enqueue in the queue: longer than `retentionPeriod` (else a throw). @default 14 days
   */
  readonly deadLetterRetentionPeriod?: Duration;
}

/** A queue with its dead-letter queue: both encrypted (SSE-SQS), TLS only, the DLQ retained 14 days by default. */
export class QueueWithDeadLetter extends Construct {
  public readonly queue: Queue;
  public readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: QueueWithDeadLetterProps) {
    super(scope, id);
    const retention = props.retentionPeriod ?? Duration.days(4);
    const deadLetterRetention = props.deadLetterRetentionPeriod ?? Duration.days(14);
    // A standard queue's message keeps its first enqueue time in the DLQ: a DLQ that keeps no
    // longer than its source may drop a message on arrival (config refuses it first, by key).
    if (deadLetterRetention.toSeconds() <= retention.toSeconds())
      throw new Error(
        `${this.node.path}: the dead-letter queue's retention (${deadLetterRetention.toDays()} days) must be longer than its queue's (${retention.toDays()} days)`,
      );
    this.deadLetterQueue = new Queue(this, "DeadLetter", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: deadLetterRetention,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: "Serverless::Serverless-SQSRedrivePolicy",
      reason: "This is the dead-letter queue of its queue.",
    });
    this.queue = new Queue(this, "Queue", {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: retention,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
  }
}
