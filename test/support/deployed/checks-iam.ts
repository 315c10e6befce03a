import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BundleOptions, bundleFunction, FUNCTION_ENTRIES, SQL_DIR } from "../../../infra/bundling";
import { allowing, type IamRequest, roleOf, statementsOf, wildcard } from "./iam";
import { resourcesOf, type TemplateJson } from "./template";
import { COMMAND_ACTIONS, type FunctionUsage } from "./usage";

type Service = keyof typeof FUNCTION_ENTRIES;

/** The bundle options the stack gives each function (`prebundleStackFunctions` builds the same). */
const BUNDLE_OPTIONS: Record<Service, BundleOptions> = {
  ingest: { sourceMaps: false },
  projector: {},
  recorder: {},
  reconciler: {},
  rollup: { copy: { from: SQL_DIR, to: "sql" } },
};

/**
 * The SDK commands a function's bundle keeps (what its code can send): every command class the
 * SDK defines, as esbuild kept it, in the handler, its chunks and its `.lazy` modules. A command
 * class is made by the SDK's command builder with its operation name as a literal
 * (`class extends X(…, "GetObject", …)`), which minification keeps.
 */
export function keptCommands(service: Service): string[] {
  const dir = mkdtempSync(join(tmpdir(), `deployed-${service}-`));
  bundleFunction(FUNCTION_ENTRIES[service], dir, BUNDLE_OPTIONS[service]);
  const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".mjs"));
  const found = new Set<string>();
  for (const file of files)
    for (const m of readFileSync(join(dir, file), "utf8").matchAll(
      /class extends [\w$]+\([\w$]+,[\w$]+,"([A-Za-z0-9]+)",[\w$]+\)/g,
    ))
      if (m[1]) found.add(m[1]);
  return [...found].sort();
}

/** Each backend function of a template: its logical id, by its service name. */
export function functionIds(template: TemplateJson): Map<string, string> {
  const ids = new Map<string, string>();
  for (const [id, fn] of resourcesOf(template, "AWS::Lambda::Function")) {
    const env = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables;
    const service = env?.POWERTOOLS_SERVICE_NAME;
    if (typeof service === "string") ids.set(service, id);
  }
  return ids;
}

/**
 * Why a listing of an exact key is required where a missing object must read as absent: the part
 * of the rule AWS leaves undocumented, said where the check fails.
 */
const UNCLEAR_LIST =
  "; without it S3 answers a GetObject of a missing key 403, not 404 (GetObject's reference), and whether a ListBucket granted under an s3:prefix condition counts for that answer is undocumented: getObjectIfPresent lists the exact key, which this grant must admit";

/** X-Ray's two actions, granted on `*` by tracing: used by every traced function's runtime. */
const TRACING = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"];

/**
 * Checks, per function: (1) each command its bundle keeps is in its model (`requests`, by the
 * actions it needs) or named as kept but never sent, with why (`keptUnsent`); (2) each request of
 * its model is allowed by its role's policies on the resource it addresses, with the conditions
 * evaluated (a ListBucket under an `s3:prefix` condition against the exact key listed, a KMS use
 * against `kms:ViaService`, the apps table against `dynamodb:LeadingKeys`); (3) each action its
 * role is granted on a resource is used: some request of the model needs it there. "Used" means
 * exactly that: a path of the code (or AWS acting with the function's credentials: the event
 * source's polling, Athena's reads, SNS's and Secrets Manager's use of a key) sends a request
 * that needs the action on that resource. X-Ray's actions (tracing) are used by every traced
 * function.
 */
export function iamProblems(
  template: TemplateJson,
  usage: Record<string, FunctionUsage>,
  kept: Record<string, string[]>,
): string[] {
  const problems: string[] = [];
  for (const [service, functionId] of functionIds(template)) {
    const model = usage[service];
    if (!model) {
      problems.push(`${service}: no usage model`);
      continue;
    }
    const statements = statementsOf(template, roleOf(template, functionId));
    const modelled = new Set(model.requests.map((r) => r.action));
    for (const command of kept[service] ?? []) {
      if (model.keptUnsent[command]) continue;
      const actions = COMMAND_ACTIONS[command];
      if (!actions)
        problems.push(`${service}: its bundle keeps ${command}, which COMMAND_ACTIONS does not map`);
      else if (!actions.every((a) => modelled.has(a)))
        problems.push(
          `${service}: its bundle keeps ${command} (${actions.join(", ")}), which its model neither sends nor lists as unsent`,
        );
    }
    for (const request of model.requests)
      if (allowing(statements, request).length === 0)
        problems.push(
          `${service}: not granted ${describe(request)}${request.action === "s3:ListBucket" ? UNCLEAR_LIST : ""}`,
        );
    for (const statement of statements)
      for (const action of statement.actions)
        for (const resource of statement.resources) {
          if (TRACING.includes(action)) continue;
          const used = model.requests.some(
            (r) => wildcard(action, r.action, true) && wildcard(resource, r.resource),
          );
          if (!used) problems.push(`${service}: granted ${action} on ${resource}, which no path uses`);
        }
  }
  // A request recorded more than once (a ledger read each pass) is named once.
  return [...new Set(problems)];
}

function describe(request: IamRequest): string {
  const context = request.context ? ` (${JSON.stringify(request.context)})` : "";
  const via = request.via ? `, recorded: its ${request.via}` : "";
  return `${request.action} on ${request.resource}${context}${via}`;
}

/**
 * Each function's usage: what the run recorded it sending (`recorded`, as IAM requests on the
 * template's resources) beside the reviewed model of what the run cannot drive (`model`).
 */
export function withRecorded(
  model: Record<string, FunctionUsage>,
  recorded: Record<string, IamRequest[]>,
): Record<string, FunctionUsage> {
  return Object.fromEntries(
    Object.entries(model).map(([service, usage]) => [
      service,
      { ...usage, requests: [...(recorded[service] ?? []), ...usage.requests] },
    ]),
  );
}

/**
 * Each grant (function, action, resource) with what uses it: a recorded request, only the model,
 * or nothing (the report the deployed test prints).
 */
export function grantCoverage(template: TemplateJson, usage: Record<string, FunctionUsage>) {
  const rows: Array<{
    service: string;
    action: string;
    resource: string;
    usedBy: "recorded" | "model" | "nothing";
  }> = [];
  for (const [service, functionId] of functionIds(template)) {
    const requests = usage[service]?.requests ?? [];
    for (const statement of statementsOf(template, roleOf(template, functionId)))
      for (const action of statement.actions)
        for (const resource of statement.resources) {
          if (TRACING.includes(action)) continue;
          const users = requests.filter(
            (r) => wildcard(action, r.action, true) && wildcard(resource, r.resource),
          );
          rows.push({
            service,
            action,
            resource,
            usedBy: users.some((r) => r.via) ? "recorded" : users.length ? "model" : "nothing",
          });
        }
  }
  return rows;
}
