/**
 * The top refused usernames deployed (#58): the Contributor Insights rule's report
 * (`GetInsightRuleReport`) over the last hour, in the form the log keeps (`loggedUsername`).
 */
import { type CloudWatchClient, GetInsightRuleReportCommand } from "@aws-sdk/client-cloudwatch";

/** A username refused, as `apps --refused` lists it. */
export interface RefusedUsername {
  /** As the log keeps it: a prefix and a hash (`loggedUsername`). */
  username: string;
  refusals: number;
  /** When it was last refused (ms), when known. */
  lastAt?: number;
}

/**
 * The usernames the rule counted from `since` to `until`, the most refused first (at most 20).
 *
 * @example await insightRefusals(cw, "webhook-prod-refused-usernames", Date.now() - 3_600_000, Date.now())
 */
export async function insightRefusals(
  cw: Pick<CloudWatchClient, "send">,
  ruleName: string,
  since: number,
  until: number,
): Promise<RefusedUsername[]> {
  const report = await cw.send(
    new GetInsightRuleReportCommand({
      RuleName: ruleName,
      StartTime: new Date(since),
      EndTime: new Date(until),
      Period: 300,
      MaxContributorCount: 20,
      OrderBy: "Sum",
    }),
  );
  return (report.Contributors ?? [])
    .map((c) => {
      const last = (c.Datapoints ?? [])
        .filter((d) => (d.ApproximateValue ?? 0) > 0)
        .map((d) => d.Timestamp?.getTime() ?? 0);
      return {
        username: c.Keys?.join(",") ?? "",
        refusals: Math.round(c.ApproximateAggregateValue ?? 0),
        ...(last.length ? { lastAt: Math.max(...last) } : {}),
      };
    })
    .filter((c) => c.username && c.refusals > 0)
    .sort((a, b) => b.refusals - a.refusals || (a.username < b.username ? -1 : 1));
}
