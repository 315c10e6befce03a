import { z } from "zod";

/**
 * The platform's resources (spec section 2), modelled once and reused by every trigger.
 *
 * Strict where the spec is certain: ids are strings, timestamps are integers in the unit the spec
 * gives, flags of occupants and call configs are the strings "true"/"false". Tolerant where it
 * says "values seen": enumerations are open strings, and every object is loose (fields the
 * platform adds pass through untouched). A field the spec lists but a published example lacks
 * is optional.
 */

/** Epoch seconds. The upper bound (year 5138) catches a millisecond value in a seconds field. */
export const epochSeconds = z
  .number()
  .int()
  .min(0)
  .max(99_999_999_999, "expected epoch seconds, got milliseconds?");
/** Epoch milliseconds. The lower bound (1973) catches a seconds value in a milliseconds field. */
export const epochMillis = z.number().int().min(100_000_000_000, "expected epoch milliseconds, got seconds?");
/** An identifier: a non-empty string. */
export const id = z.string().min(1);
/** The platform's string-encoded booleans. */
export const stringBoolean = z.enum(["true", "false"]);

/** 2.3 User, as it appears in payloads. */
export const userSchema = z.looseObject({
  uid: id,
  name: z.string().optional(),
  avatar: z.string().optional(),
  status: z.string().optional(),
  role: z.string().optional(),
  lastActiveAt: epochSeconds.optional(),
  createdAt: epochSeconds.optional(),
  conversationId: z.string().optional(),
  scope: z.string().optional(),
  oldScope: z.string().optional(),
  hasBlockedMe: z.boolean().optional(),
  blockedByMe: z.boolean().optional(),
  deactivatedAt: epochSeconds.optional(),
});
export type User = z.infer<typeof userSchema>;

/** A map keyed by uid of user objects (`data.members`, `data.users`, mentions). */
export const userMapSchema = z.record(z.string(), userSchema);

/** 2.4 Group, as it appears in event payloads. */
export const groupSchema = z.looseObject({
  guid: id,
  name: z.string(),
  type: z.string(),
  scope: z.string().optional(),
  membersCount: z.number().int().min(0),
  onlineMembersCount: z.number().int().min(0).optional(),
  joinedAt: epochSeconds.optional(),
  hasJoined: z.boolean().optional(),
  conversationId: z.string().optional(),
  createdAt: epochSeconds,
  owner: z.string(),
  updatedAt: epochSeconds.optional(),
  updatedBy: z.string().optional(),
  oldOwner: z.string().optional(),
});
export type Group = z.infer<typeof groupSchema>;

/** 2.5 An entity wrapper: `{ entity, entityType }`. */
export function entityWrapper<T extends z.ZodType>(entity: T) {
  return z.looseObject({ entity, entityType: z.string() });
}

const messageCore = {
  id,
  conversationId: z.string(),
  sender: z.string(),
  receiverType: z.string(),
  receiver: z.string(),
  category: z.string(),
  type: z.string(),
  sentAt: epochSeconds,
  updatedAt: epochSeconds.optional(),
  editedAt: epochSeconds.optional(),
  editedBy: z.string().optional(),
  deletedAt: epochSeconds.optional(),
  deletedBy: z.string().optional(),
  deliveredAt: epochSeconds.optional(),
  readAt: epochSeconds.optional(),
};

/** 2.5 A text message (`message_sent`, `user_mentioned`). */
export const textMessageSchema = z.looseObject({
  ...messageCore,
  data: z.looseObject({
    text: z.string().optional(),
    entities: z
      .looseObject({
        sender: entityWrapper(userSchema).optional(),
        receiver: entityWrapper(z.looseObject({})).optional(),
      })
      .optional(),
    // The spec puts mentions at data.mentions; the published example keeps them here, at
    // data.message.data.mentions. We follow the example.
    mentions: userMapSchema.optional(),
  }),
});

/** The message an edit or delete acts on (`entities.on.entity`); shortened examples carry little but its id. */
export const messageRefSchema = z.looseObject({
  id,
  conversationId: z.string().optional(),
  sender: z.string().optional(),
  receiver: z.string().optional(),
  sentAt: epochSeconds.optional(),
  editedAt: epochSeconds.optional(),
  editedBy: z.string().optional(),
  deletedAt: epochSeconds.optional(),
  deletedBy: z.string().optional(),
  deliveredAt: epochSeconds.optional(),
  readAt: epochSeconds.optional(),
  updatedAt: epochSeconds.optional(),
});

/** 6.5 An action message (`message_edited`, `message_deleted`). */
export function actionMessageSchema<A extends string>(action: A) {
  return z.looseObject({
    ...messageCore,
    data: z.looseObject({
      action: z.literal(action),
      entities: z.looseObject({
        by: entityWrapper(userSchema),
        for: entityWrapper(userSchema).optional(),
        on: entityWrapper(messageRefSchema),
      }),
    }),
  });
}

/** 2.6 Reaction. */
export const reactionSchema = z.looseObject({
  id,
  messageId: id,
  reaction: z.string(),
  uid: id,
  reactedAt: epochSeconds,
  reactedBy: userSchema,
});

/** 6.5 Receipt `data`. */
export function receiptDataSchema<A extends string>(action: A) {
  return z.looseObject({
    receiver: z.string(),
    receiverType: z.string(),
    type: z.string(),
    sender: z.string(),
    messageSender: z.string(),
    body: z.looseObject({
      action: z.literal(action),
      messageId: id,
      user: userSchema,
      timestamp: epochSeconds,
    }),
  });
}

/** 6.6 `currentConnection` of `user_connection_status_changed` (times in milliseconds). */
export const connectionSchema = z.looseObject({
  action: z.string(),
  appInfo: z
    .looseObject({
      version: z.string().optional(),
      apiVersion: z.string().optional(),
      origin: z.string().optional(),
      uts: epochMillis.optional(),
      clientIp: z.string().optional(),
    })
    .optional(),
  platform: z.string(),
  userAgent: z.string().optional(),
  connectedAt: epochMillis,
});

/** 2.7 Call or meeting occupant. */
export const occupantSchema = z.looseObject({
  joined_at: epochSeconds,
  left_at: epochSeconds.optional(),
  audio_call: stringBoolean,
  name: z.string(),
});
export type Occupant = z.infer<typeof occupantSchema>;

/** 6.8 `initial_config`: string-valued; the flags are "true"/"false". */
export const initialConfigSchema = z.looseObject({
  is_video_muted: stringBoolean.optional(),
  start_recording_on_call_start: stringBoolean.optional(),
  call_version: z.string().optional(),
  is_audio_muted: stringBoolean.optional(),
  sdk: z.string().optional(),
  mode: z.string().optional(),
  platform: z.string().optional(),
  is_audio_only: stringBoolean.optional(),
});

/** The call entity inside `call_initiated` (note the lower-case `sessionid`). */
export const callEntitySchema = z.looseObject({
  sessionid: id,
  conversationId: z.string().optional(),
  sender: z.string().optional(),
  receiverType: z.string().optional(),
  receiver: z.string().optional(),
  status: z.string().optional(),
  type: z.string().optional(),
  initiatedAt: epochSeconds.optional(),
  joinedAt: epochSeconds.optional(),
});

/** 6.8 The message-like call object of `call_initiated` and the call outcome triggers. */
export function callMessageSchema<A extends string>(action: A) {
  return z.looseObject({
    id,
    conversationId: z.string(),
    sender: z.string(),
    receiverType: z.string(),
    receiver: z.string(),
    category: z.string(),
    type: z.string(),
    data: z.looseObject({
      action: z.literal(action),
      entities: z
        .looseObject({
          by: entityWrapper(userSchema).optional(),
          for: entityWrapper(userSchema).optional(),
          on: entityWrapper(callEntitySchema).optional(),
        })
        .optional(),
      resource: z.string().optional(),
    }),
    sentAt: epochSeconds,
    updatedAt: epochSeconds.optional(),
  });
}
