import { knownEventSchema } from "@webhook-backend/stream/events/schemas";
import type * as z from "zod/mini";

/**
 * What a redaction must keep of a payload: every field its trigger's schema requires
 * (`packages/stream/src/events/schemas.ts`), derived from the zod schemas themselves, never listed by hand. A
 * redaction that removed one (a call's `data.action`, a reaction's `id` and `messageId`, an edit's
 * `data.action`, which says it is the action layout with `data.entities.on`) made the redacted
 * line fail its schema or read as another fact: `rederive` then derived it again differently and
 * the figures changed (#50, defect 1). Of the fields the schemas require, only an occupant's `name`
 * is about a person, and the redaction renames it rather than removing it; every other one is an
 * identifier, a time, a count or an enumeration, whose uids become the pseudonym.
 */

/** A schema, as zod/mini's definitions describe it (the subset walked here). */
type Schema = z.ZodMiniType;

/** What is required at one place of a payload, and below it. */
export interface Required {
  /** The keys the object here must keep. */
  keys: ReadonlySet<string>;
  /** What is required under one of its keys (or, in a list, under any element). */
  child(key: string): Required;
}

/** Nothing required here or below: a payload without a schema (a table item, an unknown trigger). */
export const NOTHING_REQUIRED: Required = { keys: new Set(), child: () => NOTHING_REQUIRED };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The schema with its wrappers (optional, nullable, default, pipe …) removed. */
function unwrap(schema: Schema): Schema {
  const def = schema.def as { type: string; innerType?: Schema; in?: Schema };
  if (def.innerType) return unwrap(def.innerType);
  if (def.type === "pipe" && def.in) return unwrap(def.in);
  return schema;
}

/**
 * What `schema` requires of `value`: an object's keys that are not optional, with what each one's
 * schema requires of its value; a union's alternative that `value` satisfies (none: nothing, the
 * payload was invalid already); a record's values, a list's elements.
 *
 * @example requiredOf(reactionSchema, reaction).keys // Set { "id", "messageId", "reaction", "uid", "reactedAt", "reactedBy" }
 */
export function requiredOf(schema: Schema | undefined, value: unknown): Required {
  if (!schema) return NOTHING_REQUIRED;
  const inner = unwrap(schema);
  const def = inner.def as {
    type: string;
    shape?: Record<string, Schema>;
    catchall?: Schema;
    options?: readonly Schema[];
    valueType?: Schema;
    element?: Schema;
  };
  switch (def.type) {
    case "union":
      return requiredOf(
        def.options?.find((option) => option.safeParse(value).success),
        value,
      );
    case "object": {
      if (!isRecord(value)) return NOTHING_REQUIRED;
      const shape = def.shape ?? {};
      const keys = new Set(Object.keys(shape).filter((k) => shape[k]?.def.type !== "optional"));
      return { keys, child: (key) => requiredOf(shape[key] ?? def.catchall, value[key]) };
    }
    case "record":
      return isRecord(value)
        ? { keys: new Set(), child: (key) => requiredOf(def.valueType, value[key]) }
        : NOTHING_REQUIRED;
    case "array":
      // A list's elements are walked one by one, each against the element's schema.
      return Array.isArray(value)
        ? { keys: new Set(), child: (index) => requiredOf(def.element, value[Number(index)]) }
        : NOTHING_REQUIRED;
    default:
      return NOTHING_REQUIRED;
  }
}

/** Each known trigger's schema, by trigger. */
const SCHEMA_OF_TRIGGER: ReadonlyMap<string, Schema> = new Map(
  knownEventSchema.def.options.flatMap((option) =>
    option.shape.trigger.def.values.map((trigger) => [String(trigger), option as Schema] as const),
  ),
);

/**
 * What a webhook body's schema requires of it (its `trigger`'s schema), or nothing for a body of
 * no known trigger.
 *
 * @example requiredOfBody({ trigger: "call_initiated", data: { call: { … } } }).child("data").child("call").child("data").keys // Set { "action" }
 */
export function requiredOfBody(body: unknown): Required {
  const trigger = isRecord(body) ? body.trigger : undefined;
  return typeof trigger === "string" ? requiredOf(SCHEMA_OF_TRIGGER.get(trigger), body) : NOTHING_REQUIRED;
}
