/**
 * Refusals per username at no per-app cost (#58): a CloudWatch Contributor Insights rule over the
 * ingest's log lines, keyed on the username as the logs keep it (`loggedUsername`), filtered on
 * the refusal line and on usernames the deployment knows (the endpoint is public: a scanner's
 * guesses are not counted, or they would page). The alarm `RefusedDeliveries` is on
 * `INSIGHT_RULE_METRIC(rule, 'MaxContributorValue')`: one username refused is enough, whatever
 * its share of the traffic. The local stack has no Contributor Insights: its log tap applies the
 * same rule (`contributionOf`) to the same lines (`npx webhook apps --refused` reads either).
 */

/** The ingest's refusal line: its message and the fields the rule reads. */
export const REFUSAL_LINE = {
  message: "delivery refused",
  usernameField: "username",
  /** `yes` when the deployment holds a credential of that name (or one a rotation replaces). */
  knownField: "usernameKnown",
  known: "yes",
} as const;

/** The rule's name for a stack (what `Monitoring` creates). @example refusalRuleName("webhook-prod") // "webhook-prod-refused-usernames" */
export function refusalRuleName(stackName: string): string {
  return `${stackName}-refused-usernames`.slice(0, 128);
}

/** A Contributor Insights rule's body (the subset this rule uses). */
export interface InsightRuleBody {
  Schema: { Name: "CloudWatchLogRule"; Version: 1 };
  LogGroupNames: string[];
  LogFormat: "JSON";
  Contribution: { Keys: string[]; Filters: Array<{ Match: string; In: string[] }> };
  AggregateOn: "Count";
}

/**
 * The rule over the ingest's log group: a refusal line of a known username counts 1 for it.
 *
 * @example JSON.stringify(refusalInsightRule("/aws/lambda/ingest"))
 */
export function refusalInsightRule(logGroupName: string): InsightRuleBody {
  return {
    Schema: { Name: "CloudWatchLogRule", Version: 1 },
    LogGroupNames: [logGroupName],
    LogFormat: "JSON",
    Contribution: {
      Keys: [`$.${REFUSAL_LINE.usernameField}`],
      Filters: [
        { Match: "$.message", In: [REFUSAL_LINE.message] },
        { Match: `$.${REFUSAL_LINE.knownField}`, In: [REFUSAL_LINE.known] },
      ],
    },
    AggregateOn: "Count",
  };
}

/** A top-level field of a JSON line by its rule path (`$.name`). */
function field(line: Record<string, unknown>, path: string): unknown {
  return path.startsWith("$.") ? line[path.slice(2)] : undefined;
}

/**
 * What a rule counts of one JSON log line, as Contributor Insights evaluates it (every filter's
 * `In` matched, every key present): the contributor's key, or undefined. What the local stack
 * runs on its lines, and what the tests run the rule's JSON through.
 *
 * @example contributionOf(refusalInsightRule("g"), { message: "delivery refused", username: "webh:3b5d", usernameKnown: "yes" }) // "webh:3b5d"
 */
export function contributionOf(rule: InsightRuleBody, line: Record<string, unknown>): string | undefined {
  for (const filter of rule.Contribution.Filters) {
    const value = field(line, filter.Match);
    if (!filter.In.some((v) => v === value)) return undefined;
  }
  const keys = rule.Contribution.Keys.map((k) => field(line, k));
  if (keys.some((k) => typeof k !== "string" && typeof k !== "number")) return undefined;
  return keys.join(",");
}
