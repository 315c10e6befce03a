import { type ErasureNotice, STREAM_KINDS, STREAM_SCHEMA_VERSION } from "@webhook-backend/stream";
import type { ErasureNotice as ErasedNotice } from "../erasure/plan";
import { StreamPublishError } from "../platform/errors";
import { streamMessage } from "./envelope";
import type { StreamPublisher } from "./publish-batches";

/** What `forget` tells its `onErased` hook once an erasure is recorded. */
export type ErasureDone = ErasedNotice;

/**
 * The erasure notice of an erasure: its id is the erasure's, so a re-run publishes the same one.
 *
 * @example erasureNotice({ appId: "app1", erasureId: "9f…", scope: "user", pseudonym: "erased-…", finishedAt })
 */
export function erasureNotice(done: ErasureDone): ErasureNotice {
  return {
    schemaVersion: STREAM_SCHEMA_VERSION,
    kind: STREAM_KINDS.erasure,
    id: done.erasureId,
    appId: done.appId,
    scope: done.scope,
    ...(done.pseudonym ? { pseudonym: done.pseudonym } : {}),
    ...(done.subject ? { subject: done.subject } : {}),
    days: done.days,
    finishedAt: done.finishedAt,
  };
}

/**
 * `forget`'s `onErased` hook on the stream: publishes the erasure notice, which every subscriber
 * of the app receives whatever its triggers (`filterPolicyOf`). A publish that failed throws, so
 * the run fails and its re-run publishes the notice again.
 *
 * @example deps.onErased = erasureNoticePublisher(snsStreamPublisher(sns, topicArn))
 * @throws StreamPublishError when SNS did not take the notice
 */
export function erasureNoticePublisher(publisher: StreamPublisher): (done: ErasureDone) => Promise<void> {
  return async (done) => {
    const message = streamMessage(erasureNotice(done));
    const { failed } = await publisher.publish([message]);
    const error = failed.get(message.id);
    if (error !== undefined)
      throw new StreamPublishError(
        `the erasure notice ${done.erasureId} was not published: run forget again`,
        true,
        {
          cause: error,
        },
      );
  };
}
