import { describe, expect, it } from "vitest";
import {
  FilterPolicyUnsupportedError,
  parseFilterPolicy,
  policyAdmits,
} from "../../shared/stream/filter-policy";
import { deliveryRef, triggerForm } from "../../tools/cli/filters";

/**
 * The filter policy a replay to one subscriber applies (#51 item 3), on AWS's documented examples
 * of the string operators ("String value matching", "Key matching", "AND/OR logic"); the same
 * evaluator is compared with fauxqs's SNS in integration/stream-filters.
 */
const admits = (policy: string, attributes: Record<string, string>) =>
  policyAdmits(parseFilterPolicy(policy), attributes);

describe("a subscription's filter policy, evaluated (#51 item 3)", () => {
  it("matches exact values, prefixes, suffixes, values ignoring case and wildcards", () => {
    expect(admits('{"customer_interests":["rugby","football"]}', { customer_interests: "rugby" })).toBe(true);
    expect(admits('{"customer_interests":["rugby","football"]}', { customer_interests: "Rugby" })).toBe(
      false,
    );
    expect(admits('{"customer_interests":[{"prefix":"bas"}]}', { customer_interests: "baseball" })).toBe(
      true,
    );
    expect(admits('{"customer_interests":[{"suffix":"ball"}]}', { customer_interests: "baseball" })).toBe(
      true,
    );
    expect(admits('{"customer_interests":[{"suffix":"ball"}]}', { customer_interests: "rugby" })).toBe(false);
    expect(
      admits('{"customer_interests":[{"equals-ignore-case":"tennis"}]}', { customer_interests: "TeNnis" }),
    ).toBe(true);
    expect(admits('{"trigger":[{"wildcard":"group_*_added"}]}', { trigger: "group_member_added" })).toBe(
      true,
    );
    expect(admits('{"trigger":[{"wildcard":"group_*_added"}]}', { trigger: "group_member_joined" })).toBe(
      false,
    );
  });

  it("matches anything-but, and key existence, an absent attribute matching only exists: false", () => {
    expect(
      admits('{"customer_interests":[{"anything-but":["rugby","tennis"]}]}', {
        customer_interests: "baseball",
      }),
    ).toBe(true);
    expect(admits('{"customer_interests":[{"anything-but":"rugby"}]}', { customer_interests: "rugby" })).toBe(
      false,
    );
    expect(admits('{"trigger":[{"anything-but":{"prefix":"group_"}}]}', { trigger: "group_created" })).toBe(
      false,
    );
    expect(admits('{"trigger":[{"anything-but":{"prefix":"group_"}}]}', {})).toBe(false);
    expect(admits('{"store":[{"exists":true}]}', { store: "example_corp" })).toBe(true);
    expect(admits('{"store":[{"exists":false}]}', { kind: "delivery" })).toBe(true);
    expect(admits('{"store":[{"exists":false}]}', { store: "example_corp" })).toBe(false);
  });

  it("ANDs its keys and ORs a key's values and $or's branches", () => {
    const policy = '{"appId":["app1","app2"],"$or":[{"trigger":[{"prefix":"group_"}]},{"kind":["erasure"]}]}';
    expect(admits(policy, { appId: "app2", trigger: "group_created", kind: "delivery" })).toBe(true);
    expect(admits(policy, { appId: "app2", trigger: "(erasure)", kind: "erasure" })).toBe(true);
    expect(admits(policy, { appId: "app2", trigger: "message_sent", kind: "delivery" })).toBe(false);
    expect(admits(policy, { appId: "app3", trigger: "group_created", kind: "delivery" })).toBe(false);
    expect(policyAdmits(undefined, {})).toBe(true);
  });

  it("refuses a policy it cannot evaluate on String attributes rather than guess", () => {
    for (const policy of [
      '{"price":[{"numeric":[">",0]}]}',
      '{"price":[100]}',
      '{"source_ip":[{"cidr":"10.0.0.0/24"}]}',
      '{"user":{"name":["Alice"]}}',
      "not json",
    ])
      expect(() => parseFilterPolicy(policy), policy).toThrow(FilterPolicyUnsupportedError);
  });
});

describe("the command-line filters (#51 item 5)", () => {
  it("takes trigger forms, refusing what is none with what was meant", () => {
    expect(triggerForm("group_member_*", ["group:*"])).toEqual(["group:*", "group_member_*"]);
    expect(() => triggerForm("grop:*")).toThrow(/did you mean "group:\*"/);
  });

  it("takes one delivery as listen prints it, <eventId>@<receivedAt>", () => {
    expect(deliveryRef("3C01FFB07048A175@1763000000300")).toEqual({
      eventId: "3c01ffb07048a175",
      receivedAt: 1763000000300,
    });
    for (const wrong of ["3c01ffb07048a175", "3c01ffb07048a175@soon", "3c01@1763000000300", "a@b@c"])
      expect(() => deliveryRef(wrong), wrong).toThrow(/expected/);
  });
});
