import type { BodyObject, FactEnvelope } from "./envelope.ts";

/** Reads a body the envelope points to (`bodyObject`: past SNS's 256 KiB), e.g. with `s3:GetObject` (`s3BodyReader`). */
export type BodyReader = (object: BodyObject) => Promise<string>;

/**
 * A delivery's (or reconcile fact's) body as the platform sent it: `body`, or the object `bodyObject` names, read with
 * `readBody`.
 *
 * @example const body = await deliveryBody(envelope, s3BodyReader(s3))
 * @throws Error when the body is in the bucket and no reader is given, or `readBody`'s error
 */
export async function deliveryBody(
  envelope: Pick<FactEnvelope, "id" | "body" | "bodyObject">,
  readBody?: BodyReader,
): Promise<string> {
  if (envelope.body !== undefined) return envelope.body;
  if (!envelope.bodyObject) throw new Error(`delivery ${envelope.id} has neither a body nor a body object`);
  if (!readBody) throw new Error(`delivery ${envelope.id}'s body is in the bucket: give a readBody`);
  return readBody(envelope.bodyObject);
}
