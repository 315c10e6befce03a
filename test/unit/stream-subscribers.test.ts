import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readDeploymentConfig } from "../../infra/config";
import { KNOWN_TRIGGERS } from "../../shared/events/schemas";
import { ConfigurationError } from "../../shared/platform/errors";
import { parseFilterPolicy, policyAdmits } from "../../shared/stream/filter-policy";
import {
  filterPolicyCombinations,
  filterPolicyOf,
  SNS_MAX_FILTER_COMBINATIONS,
  type StreamSubscriber,
  streamSubscribersSchema,
  subscriberOutputs,
  TRIGGER_FAMILIES,
  triggerFilter,
  triggerFormProblem,
} from "../../shared/stream/subscribers";
import { subscriberQueues } from "../../tools/target";

type Attributes = Record<string, string | undefined>;

/**
 * Whether SNS delivers a message with these attributes through this filter policy, as AWS's
 * guide describes it ("AND/OR logic", "Prefix matching"): every key beside `$or` matches (AND),
 * a key matches when any of its values does (OR), a missing attribute matches nothing, and a
 * top-level `$or` needs one branch to match. Written apart from the code under test, so the
 * property compares the policy with what SNS would do, not with itself.
 */
function snsDelivers(policy: Record<string, unknown> | undefined, attributes: Attributes): boolean {
  if (policy === undefined) return true;
  const { $or, ...keys } = policy;
  const value = (v: unknown, attribute: string | undefined): boolean => {
    if (attribute === undefined) return false;
    if (typeof v === "string") return attribute === v;
    if (typeof v === "object" && v !== null && "prefix" in v && typeof v.prefix === "string")
      return attribute.startsWith(v.prefix);
    throw new Error(`an operator this evaluator does not know: ${JSON.stringify(v)}`);
  };
  const all = Object.entries(keys).every(
    ([key, values]) => Array.isArray(values) && values.some((v) => value(v, attributes[key])),
  );
  return all && (!Array.isArray($or) || $or.some((branch) => snsDelivers(branch, attributes)));
}

/** What the subscriber asked for, read from its forms directly (no policy, no compaction). */
function wanted(subscriber: StreamSubscriber, attributes: Attributes): boolean {
  const appId = attributes.appId ?? "";
  const ofItsApps = subscriber.apps === undefined || subscriber.apps.includes(appId);
  if (attributes.kind === "erasure") return ofItsApps;
  const trigger = attributes.trigger ?? "";
  const matches = (form: string) =>
    form.endsWith(":*")
      ? trigger.startsWith(`${form.slice(0, -2)}_`)
      : form.endsWith("*")
        ? trigger.startsWith(form.slice(0, -1))
        : trigger === form;
  return ofItsApps && (subscriber.triggers === undefined || subscriber.triggers.some(matches));
}

const KNOWN = [...KNOWN_TRIGGERS].sort();
/** Triggers a message may carry: the known ones and some the platform may add (never in a subscriber's exact names). */
const MESSAGE_TRIGGERS = [...KNOWN, "poll_created", "group_archived", "message_pinned", "x"];
const APPS = ["app1", "app2", "app3", "tenant-42"];

/** A prefix form: the start of a trigger the stream may carry (known or not), then `*`. */
const prefixForm = fc
  .tuple(fc.constantFrom(...MESSAGE_TRIGGERS), fc.nat())
  .map(([t, n]) => `${t.slice(0, 1 + (n % t.length))}*`);
const triggerForm = fc.oneof(
  fc.constantFrom(...KNOWN),
  fc.constantFrom(...TRIGGER_FAMILIES).map((f) => `${f}:*`),
  prefixForm,
);
const subscriber = fc.record(
  {
    name: fc.constantFrom("crm", "crm-sync", "moderation", "a1-b2"),
    apps: fc.uniqueArray(fc.constantFrom(...APPS), { minLength: 1 }),
    triggers: fc.array(triggerForm, { minLength: 1, maxLength: 12 }),
    rawDelivery: fc.boolean(),
  },
  { requiredKeys: ["name"] },
);
const message = fc.oneof(
  fc.record({
    appId: fc.constantFrom(...APPS, "other-app"),
    trigger: fc.constantFrom(...MESSAGE_TRIGGERS),
    kind: fc.constant("delivery"),
  }),
  // An erasure notice's trigger attribute, whatever it holds (or none), must not matter.
  fc.record(
    {
      appId: fc.constantFrom(...APPS, "other-app"),
      trigger: fc.constantFrom(...MESSAGE_TRIGGERS, "erasure"),
      kind: fc.constant("erasure"),
    },
    { requiredKeys: ["appId", "kind"] },
  ),
);

describe("a subscriber's filter policy (#41 item 4)", () => {
  it("admits exactly the deliveries of its apps and triggers, and every erasure notice of its apps, whatever its forms", () => {
    fc.assert(
      fc.property(subscriber, fc.array(message, { minLength: 1, maxLength: 30 }), (s, messages) => {
        const policy = filterPolicyOf(s);
        for (const m of messages) expect(snsDelivers(policy, m), JSON.stringify({ s, m })).toBe(wanted(s, m));
      }),
      { numRuns: 500 },
    );
  });

  it("turns families into prefixes and leaves out what a shorter prefix already matches", () => {
    expect(
      filterPolicyOf({
        name: "crm",
        apps: ["app2", "app1", "app2"],
        triggers: ["group_created", "group:*", "group_member_*", "message_sent", "message_sent"],
      }),
    ).toEqual({
      appId: ["app1", "app2"],
      $or: [{ trigger: ["message_sent", { prefix: "group_" }] }, { kind: ["erasure"] }],
    });
    expect(filterPolicyOf({ name: "all" })).toBeUndefined();
    expect(filterPolicyOf({ name: "one-app", apps: ["app1"] })).toEqual({ appId: ["app1"] });
  });

  it("counts combinations as AWS's guide does (its two worked examples)", () => {
    // "Filter policy constraints": 3 × 1 × 2.
    expect(
      filterPolicyCombinations({
        key_a: ["value_one", "value_two", "value_three"],
        key_b: ["value_one"],
        key_c: ["value_one", "value_two"],
      }),
    ).toBe(6);
    // "AND/OR logic": (1 × 2) + (1 × 1 × 2) + (1 × 1 × 3).
    expect(
      filterPolicyCombinations({
        source: ["aws.cloudwatch"],
        $or: [
          { metricName: ["CPUUtilization", "ReadLatency"] },
          { metricType: ["MetricType"], $or: [{ metricId: [1234, 4321] }, { spaceId: [1000, 2000, 3000] }] },
        ],
      }),
    ).toBe(7);
  });

  it("takes every subscriber whose policy SNS takes (at most 150 combinations, 5 keys) and refuses the others, naming it and the count", () => {
    const many = fc.record({
      name: fc.constant("wide"),
      apps: fc.uniqueArray(
        fc.string({ minLength: 1, maxLength: 6 }).map((s) => `a${s}`),
        { minLength: 1, maxLength: 160 },
      ),
      triggers: fc.uniqueArray(fc.constantFrom(...KNOWN), { minLength: 1, maxLength: KNOWN.length }),
    });
    fc.assert(
      fc.property(many, (s) => {
        // What SNS would count for this shape: each app with each trigger value, and with the erasure notice.
        const expected = s.apps.length * (s.triggers.length + 1);
        const parsed = streamSubscribersSchema.safeParse([s]);
        if (expected <= SNS_MAX_FILTER_COMBINATIONS) {
          expect(parsed.success).toBe(true);
          const policy = filterPolicyOf(s) ?? {};
          expect(filterPolicyCombinations(policy)).toBe(expected);
          const keys = (p: Record<string, unknown>): number =>
            Object.keys(p).filter((k) => k !== "$or").length;
          for (const branch of policy.$or as Array<Record<string, unknown>>)
            expect(keys(policy) + keys(branch)).toBeLessThanOrEqual(5);
        } else {
          expect(parsed.error?.issues.map((i) => i.message)).toEqual([
            expect.stringMatching(
              new RegExp(`^"wide": its filter policy has ${expected} value combinations`),
            ),
          ]);
          expect(() => filterPolicyOf(s)).toThrow(ConfigurationError);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a misspelt trigger or family, naming the closest, and a form it cannot read", () => {
    const parsed = streamSubscribersSchema.safeParse([
      { name: "crm", triggers: ["mesage_sent", "grup:*", "Group Created", "*"] },
    ]);
    const messages = parsed.error?.issues.map((i) => i.message) ?? [];
    expect(messages).toEqual([
      expect.stringMatching(
        /^"crm": triggers: unknown trigger "mesage_sent" \(did you mean "message_sent"\?/,
      ),
      expect.stringMatching(/unknown trigger family "grup:\*" \(did you mean "group:\*"\?/),
      expect.stringMatching(/"Group Created" is not a trigger form/),
      expect.stringMatching(/"\*" matches every trigger: leave triggers out/),
    ]);
    expect(() => filterPolicyOf({ name: "listen", triggers: ["mesage_sent"] })).toThrow(
      /stream subscriber "listen": triggers: unknown trigger "mesage_sent"/,
    );
  });

  it("refuses empty lists, two subscribers of one name, and names that cannot name a queue's outputs", () => {
    const parsed = streamSubscribersSchema.safeParse([
      { name: "crm", apps: [], triggers: [] },
      { name: "crm" },
      { name: "CRM_sync" },
    ]);
    expect(parsed.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual([
      expect.stringMatching(/^2\.name: expected lower-case words/),
      expect.stringMatching(/^0: "crm": apps: an empty list matches no app/),
      expect.stringMatching(/^0: "crm": triggers: an empty list matches no trigger/),
      '1: "crm": another subscriber has this name',
    ]);
  });

  it("gives distinct subscribers distinct outputs", () => {
    const name = fc
      .array(fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/), { minLength: 1, maxLength: 4 })
      .map((words) => words.join("-"));
    fc.assert(
      fc.property(name, name, (a, b) => {
        fc.pre(a !== b);
        expect(streamSubscribersSchema.safeParse([{ name: a }, { name: b }]).success).toBe(true);
        expect(subscriberOutputs(a).queueUrl).not.toBe(subscriberOutputs(b).queueUrl);
      }),
    );
    expect(subscriberOutputs("crm-sync")).toEqual({
      queueUrl: "StreamSubscriberCrmSyncQueueUrl",
      queueArn: "StreamSubscriberCrmSyncQueueArn",
      deadLetterQueueUrl: "StreamSubscriberCrmSyncDeadLetterQueueUrl",
    });
  });
});

describe("one vocabulary of trigger filters (#51 item 5)", () => {
  it("matches a trigger as the subscriber's SNS policy of the same forms routes it, whatever the forms", () => {
    fc.assert(
      fc.property(
        fc.array(triggerForm, { minLength: 1, maxLength: 12 }),
        fc.constantFrom(...MESSAGE_TRIGGERS),
        (forms, trigger) => {
          const policy = filterPolicyOf({ name: "listen", triggers: forms });
          expect(triggerFilter(forms)(trigger)).toBe(snsDelivers(policy, { trigger, kind: "delivery" }));
        },
      ),
      { numRuns: 500 },
    );
    expect(triggerFilter(undefined)("anything")).toBe(true);
  });

  it("refuses what is no form, naming what was meant, as a subscriber's triggers are refused", () => {
    expect(triggerFormProblem("group:*")).toBeUndefined();
    expect(triggerFormProblem("grop:*")).toMatch(
      /unknown trigger family "grop:\*" \(did you mean "group:\*"\?/,
    );
    expect(triggerFormProblem("poll_created")).toMatch(/a prefix: "poll_created\*"/);
    expect(() => triggerFilter(["group_craeted"])).toThrow(ConfigurationError);
  });
});

describe("a subscription's policy as a replay to one subscriber evaluates it (#51 item 3)", () => {
  it("admits exactly what SNS delivers through every policy filterPolicyOf makes, read back from its JSON", () => {
    fc.assert(
      fc.property(subscriber, fc.array(message, { minLength: 1, maxLength: 30 }), (s, messages) => {
        const made = filterPolicyOf(s);
        const policy = made === undefined ? undefined : parseFilterPolicy(JSON.stringify(made));
        for (const m of messages)
          expect(policyAdmits(policy, m), JSON.stringify({ s, m })).toBe(snsDelivers(made, m));
      }),
      { numRuns: 300 },
    );
  });

  it("finds each declared subscriber's queue among a stack's outputs by its name", () => {
    const outputs = {
      [subscriberOutputs("crm-sync").queueUrl]: "https://sqs/crm-sync",
      [subscriberOutputs("a1-b2").queueUrl]: "https://sqs/a1-b2",
      [subscriberOutputs("crm-sync").deadLetterQueueUrl]: "https://sqs/crm-sync-dlq",
      StreamUnpublishedQueueUrl: "https://sqs/unpublished",
    };
    expect(subscriberQueues(outputs)).toEqual({
      "crm-sync": "https://sqs/crm-sync",
      "a1-b2": "https://sqs/a1-b2",
    });
  });
});

describe("the streamSubscribers context key", () => {
  it("is none by default, and read from cdk.json's list or -c's JSON", () => {
    expect(readDeploymentConfig({}).streamSubscribers).toEqual([]);
    const given = [{ name: "crm", apps: ["app1"], triggers: ["group:*"], rawDelivery: false }];
    expect(readDeploymentConfig({ streamSubscribers: given }).streamSubscribers).toEqual(given);
    expect(readDeploymentConfig({ streamSubscribers: JSON.stringify(given) }).streamSubscribers).toEqual(
      given,
    );
  });

  it("refuses an invalid subscriber at synth, naming the key, the subscriber and the problem", () => {
    expect(() =>
      readDeploymentConfig({ streamSubscribers: '[{"name":"crm","triggers":["mesage_sent"]}]' }),
    ).toThrow(/invalid CDK context: streamSubscribers\.0: "crm": triggers: unknown trigger "mesage_sent"/);
    expect(() => readDeploymentConfig({ streamSubscribers: '[{"name":"crm","filter":"x"}]' })).toThrow(
      /streamSubscribers\.0: Unrecognized key: "filter"/,
    );
    expect(() => readDeploymentConfig({ streamSubscriber: "[]" })).toThrow(
      /unknown key "streamSubscriber" \(did you mean "streamSubscribers"\?\)/,
    );
  });
});
