import { CLI_DEFAULTS, resourcesOf, type TemplateJson } from "./template";

/**
 * Check: the template names no account or region of the machine that synthesized it (the CDK
 * CLI's defaults, us-east-1 when nothing is configured): a reused `cdk.out` deploys anywhere.
 */
export function pinnedEnvironmentProblems(template: TemplateJson): string[] {
  const problems: string[] = [];
  for (const [id, resource] of Object.entries(template.Resources)) {
    const text = JSON.stringify(resource.Properties ?? {});
    for (const value of Object.values(CLI_DEFAULTS))
      if (text.includes(value))
        problems.push(`${id} (${resource.Type}) names ${value}, the synthesizing CLI's default`);
  }
  return problems;
}

/**
 * Check: every function (the backend's and CDK's custom resource providers) logs to a log group
 * of the template that has a retention (a function without one logs to Lambda's default group,
 * kept forever: personal data past every window).
 */
export function logRetentionProblems(template: TemplateJson): string[] {
  const problems: string[] = [];
  for (const [id, fn] of resourcesOf(template, "AWS::Lambda::Function")) {
    const config = fn.Properties?.LoggingConfig as { LogGroup?: { Ref?: string } } | undefined;
    const group = config?.LogGroup?.Ref;
    const resource = group ? template.Resources[group] : undefined;
    if (!group || resource?.Type !== "AWS::Logs::LogGroup")
      problems.push(`${id}: logs to Lambda's default log group (no retention)`);
    else if (typeof resource.Properties?.RetentionInDays !== "number")
      problems.push(`${id}: its log group ${group} keeps logs forever`);
  }
  return problems;
}
