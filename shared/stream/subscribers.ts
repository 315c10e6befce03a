import { closest } from "fastest-levenshtein";
import * as z from "zod/mini";
import { KNOWN_TRIGGERS } from "../events/schemas";
import { ConfigurationError } from "../platform/errors";

/**
 * The deployment's subscribers to the stream of facts (#41), declared by the `streamSubscribers`
 * context key, and the SNS filter policy each one's subscription gets. Pure: the CDK stack, the
 * local stack and `webhook listen` build their subscriptions from it.
 */

/** The message attributes every published message carries, which filter policies match on. */
export const STREAM_ATTRIBUTES = { appId: "appId", trigger: "trigger", kind: "kind" } as const;

/** The values of the `kind` attribute: a delivery of the platform, or an erasure notice of `forget`. */
export const STREAM_KINDS = { delivery: "delivery", erasure: "erasure" } as const;

/** SNS refuses a filter policy whose value combinations (counted as `filterPolicyCombinations` does) pass this. */
export const SNS_MAX_FILTER_COMBINATIONS = 150;

/**
 * At most this many declared subscribers: each adds seven resources and three outputs to the stack
 * (CloudFormation takes 500 and 200), and a filter policy to the topic (SNS takes 200 per topic). A
 * service with more consumers than this fans out from its own queue.
 */
export const MAX_STREAM_SUBSCRIBERS = 25;

/** The stack outputs of the stream: what `webhook listen --stack`, `replay --to-stream` and `redrive --stream` read. */
export const STREAM_OUTPUTS = {
  topicArn: "StreamTopicArn",
  /** The topic's KMS key: an operator who publishes (`replay --to-stream`, `forget`) needs it through SNS. */
  keyArn: "StreamKeyArn",
  unpublishedQueueUrl: "StreamUnpublishedQueueUrl",
} as const;

/** Lower-case words of letters and digits joined by `-`, each starting with a letter: `crm-sync`. */
const NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*$/;
const NAME_EXPECTED =
  "expected lower-case words of letters and digits joined by - (each starting with a letter), up to 40 characters: crm-sync";

const subscriberSchema = z.strictObject({
  /** Names the subscriber's queue, its outputs and its alarms. */
  name: z.string(NAME_EXPECTED).check(z.regex(NAME_PATTERN, NAME_EXPECTED), z.maxLength(40, NAME_EXPECTED)),
  /** Only these apps' deliveries (and erasure notices). @default every app */
  apps: z.optional(z.array(z.string().check(z.minLength(1, "expected an app id")))),
  /**
   * Only these triggers: exact names (`message_sent`), families (`group:*`: every `group_…`
   * trigger) or prefixes (`group_member_*`). Erasure notices pass whatever the triggers.
   * @default every trigger
   */
  triggers: z.optional(z.array(z.string())),
  /**
   * SNS raw message delivery: the queue's message body is the envelope itself and the attributes
   * are SQS message attributes; off, the body is SNS's JSON notification that wraps it.
   * @default true
   */
  rawDelivery: z.optional(z.boolean()),
});

/**
 * One subscriber of the stream, as the `streamSubscribers` context key declares it.
 *
 * @example const crm: StreamSubscriber = { name: "crm", apps: ["app1"], triggers: ["group:*", "message_sent"] }
 */
export type StreamSubscriber = z.infer<typeof subscriberSchema>;

/** How SNS matches one trigger value: the exact name, or `{ prefix }`. */
type TriggerMatcher = string | { prefix: string };

/** The trigger families: what comes before the first `_` of a known trigger (`group`, `call`, …). */
export const TRIGGER_FAMILIES: readonly string[] = [
  ...new Set([...KNOWN_TRIGGERS].map((t) => t.split("_")[0] ?? t)),
].sort();

const FAMILY_FORM = /^([a-z][a-z0-9]*):\*$/;
const PREFIX_FORM = /^([a-z0-9_]+)\*$/;
const EXACT_FORM = /^[a-z][a-z0-9_]*$/;

/**
 * What one trigger form of a subscriber means to SNS, or the problem with it. An exact name must
 * be a trigger the backend knows and a family a known family (a misspelt one would route nothing,
 * silently); a prefix matches any trigger, so `poll_*` also reaches triggers the platform adds later.
 */
function triggerMatcher(form: string): { matcher: TriggerMatcher } | { problem: string } {
  const family = FAMILY_FORM.exec(form)?.[1];
  if (family !== undefined)
    return TRIGGER_FAMILIES.includes(family)
      ? { matcher: { prefix: `${family}_` } }
      : {
          problem: `unknown trigger family "${form}" (did you mean "${closest(family, [...TRIGGER_FAMILIES])}:*"? A prefix such as "${family}_*" also matches triggers the backend does not model yet)`,
        };
  const prefix = PREFIX_FORM.exec(form)?.[1];
  if (prefix !== undefined) return { matcher: { prefix } };
  if (form === "*") return { problem: `"*" matches every trigger: leave triggers out instead` };
  if (EXACT_FORM.test(form))
    return KNOWN_TRIGGERS.has(form)
      ? { matcher: form }
      : {
          problem: `unknown trigger "${form}" (did you mean "${closest(form, [...KNOWN_TRIGGERS])}"? A trigger the backend does not model yet is matched by a prefix: "${form}*")`,
        };
  return {
    problem: `"${form}" is not a trigger form: expected a trigger name (message_sent), a family (group:*) or a prefix (group_member_*)`,
  };
}

/**
 * What is wrong with one trigger form, or `undefined` when it is one: the vocabulary of every
 * trigger filter (a subscriber's, `listen --trigger`, `replay --trigger`, `events --trigger`).
 *
 * @example triggerFormProblem("group:*") // undefined
 * @example triggerFormProblem("grop:*") // 'unknown trigger family "grop:*" (did you mean "group:*"? …)'
 */
export function triggerFormProblem(form: string): string | undefined {
  const parsed = triggerMatcher(form);
  return "problem" in parsed ? parsed.problem : undefined;
}

/**
 * Whether a trigger passes a list of trigger forms, as SNS matches the same forms in a
 * subscriber's filter policy: an exact name (`message_sent`), a family (`group:*`: every
 * `group_…` trigger) or a prefix (`group_member_*`, which also matches triggers the backend does
 * not model yet). No forms (or none given): every trigger.
 *
 * @example triggerFilter(["group:*", "message_sent"])("group_member_added") // true
 * @throws ConfigurationError naming each form that is none
 */
export function triggerFilter(forms: readonly string[] | undefined): (trigger: string) => boolean {
  if (!forms?.length) return () => true;
  const matchers = forms.map((form) => {
    const parsed = triggerMatcher(form);
    if ("problem" in parsed) throw new ConfigurationError(`trigger filter: ${parsed.problem}`);
    return parsed.matcher;
  });
  return (trigger) =>
    matchers.some((m) => (typeof m === "string" ? trigger === m : trigger.startsWith(m.prefix)));
}

/**
 * The fewest SNS values that match the same triggers: an exact name or a prefix that a shorter
 * prefix already covers is left out, each once, in a stable order.
 */
function compact(matchers: readonly TriggerMatcher[]): TriggerMatcher[] {
  const prefixes = [...new Set(matchers.flatMap((m) => (typeof m === "string" ? [] : [m.prefix])))].sort();
  const kept = prefixes.filter((p) => !prefixes.some((q) => q !== p && p.startsWith(q)));
  const exact = [...new Set(matchers.filter((m): m is string => typeof m === "string"))]
    .filter((name) => !kept.some((p) => name.startsWith(p)))
    .sort();
  return [...exact, ...kept.map((prefix) => ({ prefix }))];
}

/** The policy of a subscriber whose forms are all valid (`subscriberProblems` is empty). */
function policyOf(
  subscriber: StreamSubscriber,
  matchers: TriggerMatcher[],
): Record<string, unknown> | undefined {
  const apps = subscriber.apps === undefined ? undefined : [...new Set(subscriber.apps)].sort();
  const byApp = apps ? { [STREAM_ATTRIBUTES.appId]: apps } : {};
  if (subscriber.triggers === undefined) return apps ? byApp : undefined;
  // An erasure notice passes whatever the triggers: the second branch of the `$or` (SNS and fauxqs
  // both take a top-level `$or`; its combinations are the sum of its branches').
  return {
    ...byApp,
    $or: [{ [STREAM_ATTRIBUTES.trigger]: matchers }, { [STREAM_ATTRIBUTES.kind]: [STREAM_KINDS.erasure] }],
  };
}

/**
 * A filter policy's value combinations as SNS counts them: the product of the number of values of
 * each key, and with `$or`, the sum of that product over each branch (the branch's keys with the
 * keys beside the `$or`). SNS refuses more than 150 (docs: "Filter policy constraints", "AND/OR logic").
 *
 * @example filterPolicyCombinations({ appId: ["a", "b"], $or: [{ trigger: ["x", "y", "z"] }, { kind: ["erasure"] }] }) // 2 × 3 + 2 × 1 = 8
 */
export function filterPolicyCombinations(policy: Record<string, unknown>): number {
  const branches = (p: Record<string, unknown>): number[][] => {
    const here = Object.entries(p)
      .filter(([key]) => key !== "$or")
      .map(([, values]) => (Array.isArray(values) ? values.length : 1));
    const or = p.$or;
    if (!Array.isArray(or)) return [here];
    return or.flatMap((group: Record<string, unknown>) => branches(group).map((b) => [...here, ...b]));
  };
  return branches(policy).reduce((sum, counts) => sum + counts.reduce((product, n) => product * n, 1), 0);
}

/** Each problem of one subscriber, in words that name it; none when SNS takes its policy. */
function subscriberProblems(subscriber: StreamSubscriber): {
  problems: string[];
  matchers: TriggerMatcher[];
} {
  const problems: string[] = [];
  const matchers: TriggerMatcher[] = [];
  if (subscriber.apps?.length === 0)
    problems.push("apps: an empty list matches no app: leave apps out to receive every app");
  if (subscriber.triggers?.length === 0)
    problems.push("triggers: an empty list matches no trigger: leave triggers out to receive every trigger");
  for (const form of subscriber.triggers ?? []) {
    const parsed = triggerMatcher(form);
    if ("problem" in parsed) problems.push(`triggers: ${parsed.problem}`);
    else matchers.push(parsed.matcher);
  }
  const compacted = compact(matchers);
  if (problems.length === 0) {
    const policy = policyOf(subscriber, compacted);
    const combinations = policy ? filterPolicyCombinations(policy) : 0;
    if (combinations > SNS_MAX_FILTER_COMBINATIONS)
      problems.push(
        `its filter policy has ${combinations} value combinations and SNS takes at most ${SNS_MAX_FILTER_COMBINATIONS}: ${
          subscriber.triggers === undefined
            ? "split its apps over several subscribers"
            : "name trigger families (group:*) or prefixes (group_member_*) instead of single triggers, or split its apps over several subscribers"
        }`,
      );
  }
  return { problems, matchers: compacted };
}

/**
 * The `streamSubscribers` context key: a list of subscribers with distinct names, each with a
 * filter SNS takes. A problem names the subscriber and what to change.
 *
 * @example streamSubscribersSchema.parse([{ name: "crm", triggers: ["group:*"] }])
 */
export const streamSubscribersSchema = z.array(subscriberSchema).check(
  z.maxLength(
    MAX_STREAM_SUBSCRIBERS,
    `at most ${MAX_STREAM_SUBSCRIBERS} subscribers (a consumer with more fans out from its own queue)`,
  ),
  z.superRefine((subscribers, ctx) => {
    const seen = new Set<string>();
    subscribers.forEach((subscriber, i) => {
      const problems = subscriberProblems(subscriber).problems;
      if (seen.has(subscriber.name)) problems.push("another subscriber has this name");
      seen.add(subscriber.name);
      for (const problem of problems)
        ctx.addIssue({
          code: "custom",
          message: `"${subscriber.name}": ${problem}`,
          path: [i],
          input: subscriber,
        });
    });
  }),
);

/**
 * The SNS filter policy of a subscriber's subscription, on the `appId`, `trigger` and `kind`
 * attributes: its apps' deliveries of its triggers, and every erasure notice of its apps;
 * `undefined` (no policy: everything) when it names neither apps nor triggers.
 *
 * @throws ConfigurationError naming the subscriber, when a trigger form is invalid or SNS would refuse the policy
 * @example filterPolicyOf({ name: "crm", apps: ["app1"], triggers: ["group:*"] })
 * // { appId: ["app1"], $or: [{ trigger: [{ prefix: "group_" }] }, { kind: ["erasure"] }] }
 */
export function filterPolicyOf(subscriber: StreamSubscriber): Record<string, unknown> | undefined {
  const { problems, matchers } = subscriberProblems(subscriber);
  if (problems.length)
    throw new ConfigurationError(`stream subscriber "${subscriber.name}": ${problems.join("; ")}`);
  return policyOf(subscriber, matchers);
}

/**
 * A subscriber's stack outputs (its queue's URL and ARN, its dead-letter queue's URL), by name.
 *
 * @example subscriberOutputs("crm-sync").queueUrl // "StreamSubscriberCrmSyncQueueUrl"
 */
export function subscriberOutputs(name: string): {
  queueUrl: string;
  queueArn: string;
  deadLetterQueueUrl: string;
} {
  const id = `StreamSubscriber${name
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("")}`;
  return {
    queueUrl: `${id}QueueUrl`,
    queueArn: `${id}QueueArn`,
    deadLetterQueueUrl: `${id}DeadLetterQueueUrl`,
  };
}
