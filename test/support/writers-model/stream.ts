import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";
import type { S3Client } from "@aws-sdk/client-s3";
import { CreateTopicCommand, type SNSClient } from "@aws-sdk/client-sns";
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { parseStreamMessage, type StreamEnvelope } from "@webhook-backend/stream";
import { s3BlobStore } from "../../../shared/adapters/s3-blob-store";
import { sqsMessageQueue } from "../../../shared/adapters/sqs-message-queue";
import { dynamoErasedSubjects, listErasedSubjects } from "../../../shared/erasure/erased-subjects";
import { erasedInFlight } from "../../../shared/erasure/in-flight";
import { EVENTS_QUEUE } from "../../../shared/platform/queues";
import type { InFlightRedaction } from "../../../shared/projector/batch";
import { switchedFactStream } from "../../../shared/projector/fact-stream";
import { erasureNoticePublisher } from "../../../shared/stream/erasure-notice";
import { LISTENER_SWITCH_CACHE_MS } from "../../../shared/stream/listener-switch";
import { projectorStream } from "../../../shared/stream/projector-stream";
import { snsStreamPublisher } from "../../../shared/stream/sns-publisher";
import { queueArnOf, subscribeQueue } from "../../../shared/stream/subscriptions";
import { createQueue, testClients, uniqueName } from "../aws";
import type { Actor, RequestGate } from "./gate";

/*
 * The stream as deployed, in a run's world (issue #50): the topic on fauxqs, one subscriber's
 * queue subscribed with raw delivery (as `listen` and a declared subscriber subscribe), the
 * stream's unpublished queue, and the events queue's dead-letter queue (a RedrivePolicy of
 * `EVENTS_QUEUE.maxReceiveCount`: fauxqs honours it, moving a message to the DLQ at the receive
 * past that count, as SQS does). The projector as its handler wires it: the erased subjects read
 * through a cache of the run's clock (one cache for the run: a warm container), the stream always
 * on (a deployment that declares subscribers). Faults the emulators cannot produce on demand are
 * injected here, and only here (`injectStreamFaults`).
 */

/** The projector's cache of the apps table (the erased subjects), as deployed. */
export const PROJECTOR_CACHE_MS = LISTENER_SWITCH_CACHE_MS;

/** A message the subscriber received, in receipt order, with the step it was drained after. */
export interface Received {
  step: number;
  message: StreamEnvelope;
  raw: string;
}

/** The stream's part of a run's world. */
export interface StreamSite {
  topicArn: string;
  subscriberUrl: string;
  unpublishedUrl: string;
  deadLetterUrl: string;
  /** What the subscriber received so far, in receipt order. */
  received: Received[];
  /** Faults armed by an operation (the emulators cannot fail on demand). */
  faults: {
    /** While set, every SNS PublishBatch of this actor (a draining projector) fails (throttled: retryable). */
    publish?: Actor;
    /** While set, every DynamoDB and S3 request of this actor (a draining projector) is throttled. */
    throttle?: Actor;
  };
  /** The projector's redaction of erased subjects, its cache the run's (one warm container). */
  redaction?: InFlightRedaction;
  /** Where the redaction reads the marks now: the draining actor's client (set by each drain). */
  readMarks?: Parameters<typeof erasedInFlight>[0];
}

/** The stream's resources made, the events queue given its dead-letter queue. */
export async function openStream(sqs: SQSClient, sns: SNSClient, eventsUrl: string): Promise<StreamSite> {
  const topicArn = (await sns.send(new CreateTopicCommand({ Name: uniqueName("wm-stream") }))).TopicArn ?? "";
  const subscriber = await subscribeQueue(sns, sqs, {
    topicArn,
    queueName: uniqueName("wm-subscriber"),
    rawDelivery: true,
  });
  const unpublishedUrl = await createQueue(sqs, uniqueName("wm-unpublished"));
  const deadLetterUrl = await createQueue(sqs, uniqueName("wm-events-dlq"));
  await sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: eventsUrl,
      Attributes: {
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: await queueArnOf(sqs, deadLetterUrl),
          maxReceiveCount: EVENTS_QUEUE.maxReceiveCount,
        }),
      },
    }),
  );
  return {
    topicArn,
    subscriberUrl: subscriber.queueUrl,
    unpublishedUrl,
    deadLetterUrl,
    received: [],
    faults: {},
  };
}

/** An error as SDK clients raise it for throttling (retryable; the SDK's own retries are past it). */
export class InjectedThrottleError extends Error {
  override name = "ThrottlingException";
  readonly $retryable = { throttling: true };
}

/**
 * The faults the model injects on an operation's clients: SNS's PublishBatch throttled, and
 * DynamoDB and S3 throttled (the archive's PUT fails: the whole batch fails, nothing archived),
 * while armed for that operation (a drain: the projector's clients only). Thrown before the SDK's retries (step `initialize`): the
 * publisher's own retries see it, as they would see SNS failing every attempt.
 */
export function injectStreamFaults(
  stream: StreamSite,
  actor: Actor,
  clients: { sns: SNSClient; dynamo: { middlewareStack: unknown }; s3: { middlewareStack: unknown } },
): void {
  clients.sns.middlewareStack.add(
    (next, context) => async (args) => {
      if (stream.faults.publish === actor && context.commandName === "PublishBatchCommand")
        throw new InjectedThrottleError("SNS throttled PublishBatch (a fault the model injects)");
      return next(args);
    },
    { step: "initialize", name: "injectedPublishFault" },
  );
  for (const [service, client] of [
    ["DynamoDB", clients.dynamo],
    ["S3", clients.s3],
  ] as const)
    (client.middlewareStack as SNSClient["middlewareStack"]).add(
      (next) => async (args) => {
        if (stream.faults.throttle === actor)
          throw new InjectedThrottleError(`${service} throttled the request (a fault the model injects)`);
        return next(args);
      },
      { step: "initialize", name: "injectedThrottle" },
    );
}

/** What one operation needs of the stream: its clients and the run's clock and stream. */
interface StreamWiring {
  stream: StreamSite;
  bucket: string;
  appsTable: string;
  clock: { now: number };
  gate: RequestGate;
  actor: Actor;
  clients: {
    sns: SNSClient;
    sqs: SQSClient;
    s3: S3Client;
    doc: DynamoDBDocumentClient;
  };
}

/** The publisher's retries wait on the run's clock (a step each), not on timers. */
const modelSleep = (w: StreamWiring) => async (ms: number) => {
  await w.gate.pause(w.actor, "publish retry wait");
  w.clock.now += ms;
};

/**
 * The projector's `redactErased` and `stream`, as functions/projector/handler.ts wires them: the
 * marks read from the run's apps table through this actor's client, cached `PROJECTOR_CACHE_MS`
 * on the run's clock across drains; the stream always on (subscribers declared), published to
 * the topic, a fact whose publish fails on its last receive kept in the unpublished queue.
 */
export function projectorStreamParts(w: StreamWiring) {
  const { stream } = w;
  stream.readMarks = listErasedSubjects(w.clients.doc, w.appsTable);
  stream.redaction ??= erasedInFlight((now) => (stream.readMarks ?? (async () => []))(now), {
    cacheMs: PROJECTOR_CACHE_MS,
    now: () => w.clock.now,
  });
  return {
    redactErased: stream.redaction,
    stream: switchedFactStream(
      async () => true,
      async () =>
        projectorStream({
          publisher: snsStreamPublisher(w.clients.sns, stream.topicArn, { sleep: modelSleep(w) }),
          unpublished: sqsMessageQueue(w.clients.sqs, stream.unpublishedUrl),
          dataStore: s3BlobStore(w.clients.s3, w.bucket),
          maxReceiveCount: EVENTS_QUEUE.maxReceiveCount,
          logger: new Logger({ serviceName: "writers-model", logLevel: "SILENT" }),
          metrics: new Metrics({ namespace: "WritersModel", serviceName: "writers-model" }),
        }),
    ),
  };
}

/**
 * `forget`'s stream parts as tools/commands/forget.ts wires them: the marks in the apps table,
 * the projectors' cache waited out on the run's clock (`settleMs`), the queues it counts (the
 * stream's unpublished queue and the events DLQ among them), the erasure notice on the topic.
 */
export function forgetStreamParts(w: StreamWiring) {
  return {
    erased: {
      subjects: dynamoErasedSubjects(w.clients.doc, w.appsTable),
      settleMs: PROJECTOR_CACHE_MS + EVENTS_QUEUE.consumerTimeoutSeconds * 1000,
    },
    sleep: async (ms: number) => {
      await w.gate.pause(w.actor, "forget waits out the projectors' cache");
      w.clock.now += ms;
    },
    onErased: erasureNoticePublisher(
      snsStreamPublisher(w.clients.sns, w.stream.topicArn, { sleep: modelSleep(w) }),
    ),
  };
}

/** The publisher `redrive --stream` and `replay --to-stream` build (the command's, on the run's clock). */
export function topicPublisher(w: StreamWiring) {
  return snsStreamPublisher(w.clients.sns, w.stream.topicArn, { sleep: modelSleep(w) });
}

/**
 * The subscriber's queue drained into `stream.received` (receipt order), outside the gate, while
 * nothing runs: what was published during step `step`.
 */
export async function drainSubscriber(stream: StreamSite, step: number): Promise<void> {
  const { sqs, destroy } = testClients();
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: stream.subscriberUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
        }),
      );
      if (Messages.length === 0) return;
      for (const m of Messages)
        stream.received.push({ step, raw: m.Body ?? "", message: parseStreamMessage(m.Body ?? "") });
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: stream.subscriberUrl,
          Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? "" })),
        }),
      );
    }
  } finally {
    destroy();
  }
}
