import { createHash, randomUUID } from "node:crypto";
import type { Message } from "@aws-sdk/client-sqs";
import type { SQSEvent, SQSRecord } from "aws-lambda";

/**
 * SQS records in the shape Lambda's event source mapping delivers them: what the local pollers
 * hand the handlers, and what tests and benchmarks build directly.
 */

/** An SQS record as Lambda's event source mapping delivers it, with the ingest's attributes. */
export function sqsRecord(
  body: string,
  attributes: {
    trigger?: string;
    appId?: string;
    receivedAt?: number | string;
    eventId?: string;
    bodyLocation?: string;
  } = {},
): SQSRecord {
  const messageAttributes: SQSRecord["messageAttributes"] = {};
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined) continue;
    messageAttributes[name] =
      typeof value === "number"
        ? { dataType: "Number", stringValue: String(value), binaryListValues: [], stringListValues: [] }
        : { dataType: "String", stringValue: value, binaryListValues: [], stringListValues: [] };
  }
  return {
    messageId: randomUUID(),
    receiptHandle: "handle",
    body,
    attributes: {
      ApproximateReceiveCount: "1",
      SentTimestamp: String(attributes.receivedAt ?? Date.now()),
      SenderId: "local",
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes,
    md5OfBody: createHash("md5").update(body).digest("hex"),
    eventSource: "aws:sqs",
    eventSourceARN: "arn:aws:sqs:us-east-1:000000000000:events",
    awsRegion: "us-east-1",
  };
}

/** The record the ingest would have enqueued for a webhook body. */
export function ingestRecordFor(body: string, receivedAt = Date.now()): SQSRecord {
  const json = JSON.parse(body) as { trigger?: string; appId?: string };
  return sqsRecord(body, {
    trigger: json.trigger,
    appId: json.appId,
    receivedAt,
    eventId: createHash("sha256").update(body).digest("hex"),
  });
}

export function sqsEvent(records: SQSRecord[]): SQSEvent {
  return { Records: records };
}

/** Converts a message received from an SQS queue into the record Lambda would deliver. */
export function recordFromMessage(message: Message, queueArn: string, region: string): SQSRecord {
  const messageAttributes: SQSRecord["messageAttributes"] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? "String",
      stringValue: value.StringValue,
      binaryListValues: [],
      stringListValues: [],
    };
  }
  const attrs = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? randomUUID(),
    receiptHandle: message.ReceiptHandle ?? "",
    body: message.Body ?? "",
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? "1",
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? "local",
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}
