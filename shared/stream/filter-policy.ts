import * as z from "zod/mini";
import { ContractViolationError } from "../platform/errors";

/**
 * An SNS subscription filter policy, evaluated here as SNS evaluates it on message attributes
 * (AWS's guide: "Subscription filter policies", "AND/OR logic", "String value matching", "Key
 * matching"): what `replay --to-subscriber` applies so that one subscriber receives from a replay
 * exactly what the topic would have delivered to it. The stream's attributes are all of type
 * String (`appId`, `trigger`, `kind`), so only the string operators can match: a policy with a
 * numeric or IP-address condition, or one scoped to the message body, is one this evaluator
 * refuses rather than guesses (`FilterPolicyUnsupportedError`).
 */

/** A condition on one attribute's string value (SNS's operators that apply to String attributes). */
export type StringCondition =
  | string
  | { prefix: string }
  | { suffix: string }
  | { "equals-ignore-case": string }
  | { wildcard: string }
  | { exists: boolean }
  | { "anything-but": string | string[] | { prefix: string } | { suffix: string } | { wildcard: string } };

/** A filter policy: every key's conditions hold (AND), each key's list holds when one does (OR); `$or` needs one branch. */
export interface FilterPolicy {
  [attribute: string]: StringCondition[] | FilterPolicy[];
}

/** A policy SNS takes but this evaluator does not (numbers, `numeric`, `cidr`, body scope). */
export class FilterPolicyUnsupportedError extends ContractViolationError {
  override name = "FilterPolicyUnsupportedError";
}

const text = z.string();
const conditionSchema = z.union([
  text,
  z.strictObject({ prefix: text }),
  z.strictObject({ suffix: text }),
  z.strictObject({ "equals-ignore-case": text }),
  z.strictObject({ wildcard: text }),
  z.strictObject({ exists: z.boolean() }),
  z.strictObject({
    "anything-but": z.union([
      text,
      z.array(text),
      z.strictObject({ prefix: text }),
      z.strictObject({ suffix: text }),
      z.strictObject({ wildcard: text }),
    ]),
  }),
]);

const isCondition = (value: unknown) => conditionSchema.safeParse(value).success;

/**
 * A policy's keys: an attribute's conditions (one, or a list), or `$or`'s branches (policies
 * themselves); nothing else (a nested key applies to a message body, not to attributes).
 */
const policySchema: z.ZodMiniType<FilterPolicy> = z.lazy(() =>
  z
    .record(
      text,
      z.union([
        z.pipe(
          conditionSchema,
          z.transform((c) => [c]),
        ),
        z.array(conditionSchema),
        z.array(policySchema),
      ]),
    )
    .check(
      z.refine((policy) =>
        Object.entries(policy).every(([key, values]) =>
          key === "$or" ? values.every((v) => !isCondition(v)) : values.every(isCondition),
        ),
      ),
    ),
);

/**
 * A subscription's `FilterPolicy` attribute (its JSON text) as a policy this evaluator applies.
 *
 * @example parseFilterPolicy('{"appId":["app1"]}') // { appId: ["app1"] }
 * @throws FilterPolicyUnsupportedError when SNS would take it but it holds a condition no String attribute can meet here (numbers, `numeric`, `cidr`), naming it
 */
export function parseFilterPolicy(json: string): FilterPolicy {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw new FilterPolicyUnsupportedError("the filter policy is not JSON", { cause: error });
  }
  const parsed = policySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new FilterPolicyUnsupportedError(
    `the filter policy holds a condition this replay cannot evaluate on the stream's String attributes (only exact strings, prefix, suffix, equals-ignore-case, wildcard, exists and anything-but of those): ${json.slice(0, 300)}`,
  );
}

/** Whether a `*` pattern (SNS's wildcard: any run of characters) matches the whole value. */
function wildcardMatches(pattern: string, value: string): boolean {
  const parts = pattern.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s").test(value);
}

function conditionHolds(condition: StringCondition, value: string | undefined): boolean {
  if (typeof condition === "string") return value === condition;
  if ("exists" in condition) return condition.exists === (value !== undefined);
  // Every other operator needs the attribute (SNS: a missing attribute matches only `exists: false`).
  if (value === undefined) return false;
  if ("prefix" in condition) return value.startsWith(condition.prefix);
  if ("suffix" in condition) return value.endsWith(condition.suffix);
  if ("equals-ignore-case" in condition)
    return value.toLowerCase() === condition["equals-ignore-case"].toLowerCase();
  if ("wildcard" in condition) return wildcardMatches(condition.wildcard, value);
  const but = condition["anything-but"];
  if (typeof but === "string") return value !== but;
  if (Array.isArray(but)) return !but.includes(value);
  if ("prefix" in but) return !value.startsWith(but.prefix);
  if ("suffix" in but) return !value.endsWith(but.suffix);
  return !wildcardMatches(but.wildcard, value);
}

/**
 * Whether SNS delivers a message with these String attributes through the policy (none: every
 * message): every key holds (AND), a key holds when one of its conditions does (OR), and a `$or`
 * holds when one of its branches does.
 *
 * @example policyAdmits({ appId: ["app1"], $or: [{ trigger: [{ prefix: "group_" }] }, { kind: ["erasure"] }] }, { appId: "app1", trigger: "group_created", kind: "delivery" }) // true
 */
export function policyAdmits(
  policy: FilterPolicy | undefined,
  attributes: Readonly<Record<string, string | undefined>>,
): boolean {
  if (policy === undefined) return true;
  return Object.entries(policy).every(([key, conditions]) =>
    key === "$or"
      ? (conditions as FilterPolicy[]).some((branch) => policyAdmits(branch, attributes))
      : (conditions as StringCondition[]).some((c) => conditionHolds(c, attributes[key])),
  );
}
