import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { Context, SQSBatchResponse, SQSEvent } from "aws-lambda";
import { recordFromMessage } from "./sqs-event";

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface PollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  region: string;
  handler: SqsHandler;
  functionName: string;
  /** Records per invocation. */
  batchSize: number;
  /** How long to gather a batch before invoking with what there is, ms. */
  batchingWindowMs: number;
  /** Invocations at once (Lambda's maximum concurrency). */
  concurrency: number;
  onError?: (error: unknown) => void;
  /** The queue's receives before the DLQ: a record that fails its last one is reported to `onDeadLetter`. */
  maxReceiveCount?: number;
  onDeadLetter?: (message: Message, receives: number) => void;
}

function lambdaContext(functionName: string): Context {
  const started = Date.now();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: "512",
    awsRequestId: `${started}-${Math.random().toString(16).slice(2)}`,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "local",
    getRemainingTimeInMillis: () => Math.max(0, 900_000 - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Plays Lambda's SQS event source mapping for one function: long-polls the queue, gathers a batch
 * (up to `batchSize`, for at most `batchingWindowMs`), invokes the handler, deletes the records it
 * did not report in `batchItemFailures`. Failed records stay in the queue and come back after the
 * visibility timeout; the queue's redrive policy moves them to the DLQ after its max receives.
 */
export class SqsPoller {
  private running = false;
  private readonly workers: Promise<void>[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private abort = new AbortController();

  constructor(private readonly options: PollerOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    for (let i = 0; i < this.options.concurrency; i++) this.workers.push(this.loop());
  }

  /** Stops receiving and waits for the batches in flight to finish (drain). */
  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    await Promise.allSettled(this.workers);
    await Promise.allSettled([...this.inFlight]);
    this.workers.length = 0;
  }

  private async receive(max: number, waitSeconds: number): Promise<Message[]> {
    const out = await this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: waitSeconds,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
      { abortSignal: this.abort.signal },
    );
    return out.Messages ?? [];
  }

  private async loop(): Promise<void> {
    const { batchSize, batchingWindowMs } = this.options;
    while (this.running) {
      try {
        const batch = await this.receive(batchSize, 1);
        if (batch.length === 0) continue;
        const deadline = Date.now() + batchingWindowMs;
        while (this.running && batch.length < batchSize && Date.now() < deadline) {
          const more = await this.receive(batchSize - batch.length, 0);
          if (more.length === 0) await new Promise((r) => setTimeout(r, 50));
          batch.push(...more);
        }
        const run = this.invoke(batch);
        this.inFlight.add(run);
        await run.finally(() => this.inFlight.delete(run));
      } catch (error) {
        if (!this.running) return;
        this.options.onError?.(error);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private async invoke(messages: Message[]): Promise<void> {
    const { sqs, queueUrl, queueArn, region, handler, functionName } = this.options;
    const records = messages.map((m) => recordFromMessage(m, queueArn, region));
    let failed: Set<string>;
    try {
      const response = await handler({ Records: records }, lambdaContext(functionName));
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      // A thrown invocation fails the whole batch, as in Lambda.
      this.options.onError?.(error);
      failed = new Set(records.map((r) => r.messageId));
    }
    const done = messages.filter((m) => m.MessageId && !failed.has(m.MessageId));
    const { maxReceiveCount, onDeadLetter } = this.options;
    for (const m of messages) {
      const receives = Number(m.Attributes?.ApproximateReceiveCount ?? 0);
      // The queue's redrive policy moves it to the DLQ instead of its next delivery: say so now.
      if (m.MessageId && failed.has(m.MessageId) && maxReceiveCount && receives >= maxReceiveCount)
        onDeadLetter?.(m, receives);
    }
    for (let i = 0; i < done.length; i += 10) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: done.slice(i, i + 10).map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
  }
}
