import * as z from "zod/mini";

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
  .int()
  .check(z.minimum(0), z.maximum(99_999_999_999, "expected epoch seconds, got milliseconds?"));
/**
 * Epoch milliseconds. The lower bound (1973) catches a seconds value in a milliseconds field; the
 * upper is the last instant a date can hold (the archive names each event's day).
 */
export const epochMillis = z
  .int()
  .check(
    z.minimum(100_000_000_000, "expected epoch milliseconds, got seconds?"),
    z.maximum(8_640_000_000_000_000, "expected epoch milliseconds within a date's range"),
  );
/** An identifier: a non-empty string. */
export const id = z.string().check(z.minLength(1));
/** The platform's string-encoded booleans. */
export const stringBoolean = z.enum(["true", "false"]);

/** 2.3 User, as it appears in payloads. */
export const userSchema = z.looseObject({
  uid: id,
  name: z.optional(z.string()),
  avatar: z.optional(z.string()),
  status: z.optional(z.string()),
  role: z.optional(z.string()),
  lastActiveAt: z.optional(epochSeconds),
  createdAt: z.optional(epochSeconds),
  conversationId: z.optional(z.string()),
  scope: z.optional(z.string()),
  oldScope: z.optional(z.string()),
  hasBlockedMe: z.optional(z.boolean()),
  blockedByMe: z.optional(z.boolean()),
  deactivatedAt: z.optional(epochSeconds),
});
export type User = z.infer<typeof userSchema>;

/** A map keyed by uid of user objects (`data.members`, `data.users`, mentions). */
export const userMapSchema = z.record(z.string(), userSchema);

/** 2.4 Group, as it appears in event payloads. */
export const groupSchema = z.looseObject({
  guid: id,
  name: z.string(),
  type: z.string(),
  scope: z.optional(z.string()),
  membersCount: z.int().check(z.minimum(0)),
  onlineMembersCount: z.optional(z.int().check(z.minimum(0))),
  joinedAt: z.optional(epochSeconds),
  hasJoined: z.optional(z.boolean()),
  conversationId: z.optional(z.string()),
  createdAt: epochSeconds,
  owner: z.string(),
  updatedAt: z.optional(epochSeconds),
  updatedBy: z.optional(z.string()),
  oldOwner: z.optional(z.string()),
});
export type Group = z.infer<typeof groupSchema>;

/**
 * The group of a membership event, as slim as a delivery may make it: the membership needs only
 * its guid. With every detail of `groupSchema` (`hasGroupDetails`) it also refreshes the group's
 * item; without, the membership is recorded and the group details skipped.
 */
export const groupRefSchema = z.looseObject({
  ...groupSchema.shape,
  name: z.optional(z.string()),
  type: z.optional(z.string()),
  membersCount: z.optional(z.int().check(z.minimum(0))),
  createdAt: z.optional(epochSeconds),
  owner: z.optional(z.string()),
});
export type GroupRef = z.infer<typeof groupRefSchema>;

/** Whether a membership event's group carries what the group's item is made of. */
export function hasGroupDetails(group: GroupRef): group is Group {
  return (
    group.name !== undefined &&
    group.type !== undefined &&
    group.membersCount !== undefined &&
    group.createdAt !== undefined &&
    group.owner !== undefined
  );
}

/** 2.5 An entity wrapper: `{ entity, entityType }`. */
export function entityWrapper<T extends z.ZodMiniType>(entity: T) {
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
  updatedAt: z.optional(epochSeconds),
  editedAt: z.optional(epochSeconds),
  editedBy: z.optional(z.string()),
  deletedAt: z.optional(epochSeconds),
  deletedBy: z.optional(z.string()),
  deliveredAt: z.optional(epochSeconds),
  readAt: z.optional(epochSeconds),
};

/** 2.5 A text message (`message_sent`, `user_mentioned`). */
export const textMessageSchema = z.looseObject({
  ...messageCore,
  data: z.looseObject({
    text: z.optional(z.string()),
    entities: z.optional(
      z.looseObject({
        sender: z.optional(entityWrapper(userSchema)),
        receiver: z.optional(entityWrapper(z.looseObject({}))),
      }),
    ),
    // The spec puts mentions at data.mentions; the published example keeps them here, at
    // data.message.data.mentions. We follow the example.
    mentions: z.optional(userMapSchema),
  }),
});

/** The message an edit or delete acts on (`entities.on.entity`); shortened examples carry little but its id. */
export const messageRefSchema = z.looseObject({
  id,
  conversationId: z.optional(z.string()),
  sender: z.optional(z.string()),
  receiver: z.optional(z.string()),
  sentAt: z.optional(epochSeconds),
  editedAt: z.optional(epochSeconds),
  editedBy: z.optional(z.string()),
  deletedAt: z.optional(epochSeconds),
  deletedBy: z.optional(z.string()),
  deliveredAt: z.optional(epochSeconds),
  readAt: z.optional(epochSeconds),
  updatedAt: z.optional(epochSeconds),
});

/** 6.5 An action message (`message_edited`, `message_deleted`). */
export function actionMessageSchema<A extends string>(action: A) {
  return z.looseObject({
    ...messageCore,
    data: z.looseObject({
      action: z.literal(action),
      entities: z.looseObject({
        by: entityWrapper(userSchema),
        for: z.optional(entityWrapper(userSchema)),
        on: entityWrapper(messageRefSchema),
      }),
    }),
  });
}

/**
 * The message itself, as live edits and deletes deliver it: `data.message` is the edited or
 * deleted message (its own id, the new text, `editedAt`/`editedBy` or `deletedAt`/`deletedBy`),
 * not the action message of the published example. Observed live by the platform's QA suite,
 * which asserts only the id and the text: everything else is optional, and `data.action` is
 * absent (a body with it is the action layout, judged by `actionMessageSchema`).
 */
export const changedMessageSchema = z.looseObject({
  id,
  conversationId: z.optional(z.string()),
  sender: z.optional(z.string()),
  receiverType: z.optional(z.string()),
  receiver: z.optional(z.string()),
  category: z.optional(z.string()),
  type: z.optional(z.string()),
  sentAt: z.optional(epochSeconds),
  updatedAt: z.optional(epochSeconds),
  editedAt: z.optional(epochSeconds),
  editedBy: z.optional(z.string()),
  deletedAt: z.optional(epochSeconds),
  deletedBy: z.optional(z.string()),
  data: z.optional(
    z.looseObject({
      action: z.optional(z.undefined()),
      text: z.optional(z.string()),
    }),
  ),
});

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

/** A legacy time: a number or a string of digits, in seconds or (beyond year 5138 as seconds) milliseconds. */
const legacyTime = z.union([
  z.int().check(z.minimum(0)),
  z.string().check(z.regex(/^\d{1,16}$/, "expected epoch seconds or milliseconds")),
]);

/**
 * A receipt in the platform's legacy webhook format (same trigger names, another envelope:
 * `origin`, `chatAPIVersion`; `data.receiptType`, `receiptSender`, `deliveredAt`/`readAt`). Apps on
 * the legacy webhooks send these; an app has one webhook system at a time. Modelled from the
 * platform's documentation (`test/examples/legacy/`), tolerant of what it leaves open.
 */
export function legacyReceiptDataSchema<A extends string>(receiptType: A) {
  return z.looseObject({
    messageId: id,
    receiptType: z.literal(receiptType),
    receiptSender: id,
    messageSender: z.optional(z.string()),
    receiptReceiver: z.optional(z.string()),
    receiverType: z.optional(z.string()),
    deliveredAt: z.optional(legacyTime),
    readAt: z.optional(legacyTime),
  });
}

/** 6.6 `currentConnection` of `user_connection_status_changed` (times in milliseconds). */
export const connectionSchema = z.looseObject({
  action: z.string(),
  appInfo: z.optional(
    z.looseObject({
      version: z.optional(z.string()),
      apiVersion: z.optional(z.string()),
      origin: z.optional(z.string()),
      uts: z.optional(epochMillis),
      clientIp: z.optional(z.string()),
    }),
  ),
  platform: z.string(),
  userAgent: z.optional(z.string()),
  connectedAt: epochMillis,
});

/** 2.7 Call or meeting occupant. */
export const occupantSchema = z.looseObject({
  joined_at: epochSeconds,
  left_at: z.optional(epochSeconds),
  audio_call: stringBoolean,
  name: z.string(),
});
export type Occupant = z.infer<typeof occupantSchema>;

/** 6.8 `initial_config`: string-valued; the flags are "true"/"false". */
export const initialConfigSchema = z.looseObject({
  is_video_muted: z.optional(stringBoolean),
  start_recording_on_call_start: z.optional(stringBoolean),
  call_version: z.optional(z.string()),
  is_audio_muted: z.optional(stringBoolean),
  sdk: z.optional(z.string()),
  mode: z.optional(z.string()),
  platform: z.optional(z.string()),
  is_audio_only: z.optional(stringBoolean),
});

/** The call entity inside `call_initiated` (note the lower-case `sessionid`). */
export const callEntitySchema = z.looseObject({
  sessionid: id,
  conversationId: z.optional(z.string()),
  sender: z.optional(z.string()),
  receiverType: z.optional(z.string()),
  receiver: z.optional(z.string()),
  status: z.optional(z.string()),
  type: z.optional(z.string()),
  initiatedAt: z.optional(epochSeconds),
  joinedAt: z.optional(epochSeconds),
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
      entities: z.optional(
        z.looseObject({
          by: z.optional(entityWrapper(userSchema)),
          for: z.optional(entityWrapper(userSchema)),
          on: z.optional(entityWrapper(callEntitySchema)),
        }),
      ),
      resource: z.optional(z.string()),
    }),
    sentAt: epochSeconds,
    updatedAt: z.optional(epochSeconds),
  });
}
