import { resourcesOf, type TemplateJson } from "./template";

/**
 * A small IAM evaluator over a synthesized template: a function's identity policies (the
 * `AWS::IAM::Policy` resources attached to its role, and its role's inline and managed ones aside),
 * each statement's actions, resources and conditions, against a request (action, resource,
 * condition keys). Template values become canonical strings (`canonical`): `arn:<LogicalId>` for a
 * `GetAtt` of an ARN, `ref:<LogicalId>` for a `Ref`, `REGION`/`ACCOUNT`/`aws` for the pseudo
 * parameters, a `Fn::Join` joined. IAM's `*` and `?` wildcards match as IAM matches them; the
 * condition operators this stack uses are evaluated (StringEquals, StringLike, ArnEquals, ArnLike,
 * ForAllValues:StringEquals), a key absent from the request failing the statement but for
 * ForAllValues (IAM's rule). Explicit denies of identity policies: none in this stack (a statement
 * with Effect Deny is reported as not evaluated).
 */
export interface Statement {
  actions: string[];
  resources: string[];
  conditions: Record<string, Record<string, string[]>>;
  effect: string;
}

/** A request a function makes: the IAM action it needs, on what, with which condition keys. */
export interface IamRequest {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
  /** The SDK command a recorded request was (absent: a modelled request). */
  via?: string;
}

/** A template value as a canonical string. */
export function canonical(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(canonical).join(",");
  if (value && typeof value === "object") {
    const v = value as Record<string, unknown>;
    if ("Ref" in v) {
      const ref = String(v.Ref);
      return ref === "AWS::Region"
        ? "REGION"
        : ref === "AWS::AccountId"
          ? "ACCOUNT"
          : ref === "AWS::Partition"
            ? "aws"
            : `ref:${ref}`;
    }
    if ("Fn::GetAtt" in v) {
      const [id, attribute] = v["Fn::GetAtt"] as [string, string];
      return attribute === "Arn" ? `arn:${id}` : `${id}.${attribute}`;
    }
    if ("Fn::Join" in v) {
      const [separator, parts] = v["Fn::Join"] as [string, unknown[]];
      return parts.map(canonical).join(separator);
    }
  }
  return JSON.stringify(value);
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/** The logical id of a function's role (`Role: GetAtt [role, Arn]`). */
export function roleOf(template: TemplateJson, functionId: string): string {
  const role = canonical(template.Resources[functionId]?.Properties?.Role);
  return role.replace(/^arn:/, "");
}

/** Every statement of the identity policies attached to a role. */
export function statementsOf(template: TemplateJson, roleId: string): Statement[] {
  return resourcesOf(template, "AWS::IAM::Policy")
    .filter(([, p]) => list(p.Properties?.Roles).some((r) => canonical(r) === `ref:${roleId}`))
    .flatMap(([, p]) => list((p.Properties?.PolicyDocument as { Statement?: unknown })?.Statement))
    .map((s) => {
      const statement = s as Record<string, unknown>;
      const conditions = (statement.Condition ?? {}) as Record<string, Record<string, unknown>>;
      return {
        actions: list(statement.Action).map(canonical),
        resources: list(statement.Resource).map(canonical),
        effect: String(statement.Effect),
        conditions: Object.fromEntries(
          Object.entries(conditions).map(([operator, keys]) => [
            operator,
            Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, list(v).map(canonical)])),
          ]),
        ),
      };
    });
}

/** IAM's wildcard match (`*` any run, `?` one character), case-insensitive for actions only. */
export function wildcard(pattern: string, value: string, ignoreCase = false): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replaceAll("*", ".*")
    .replaceAll("?", ".");
  return new RegExp(`^${source}$`, ignoreCase ? "i" : "").test(value);
}

function conditionHolds(operator: string, expected: Record<string, string[]>, request: IamRequest): boolean {
  return Object.entries(expected).every(([key, values]) => {
    const given = request.context?.[key];
    if (operator.startsWith("ForAllValues:")) {
      if (given === undefined) return true;
      return list(given).every((g) => values.includes(String(g)));
    }
    if (given === undefined) return false;
    const g = String(given);
    if (operator === "StringEquals" || operator === "ArnEquals") return values.includes(g);
    if (operator === "StringLike" || operator === "ArnLike") return values.some((v) => wildcard(v, g));
    if (operator === "StringNotEquals") return !values.includes(g);
    if (operator === "Bool") return values.includes(g);
    throw new Error(`condition operator ${operator} is not evaluated by this check`);
  });
}

/** The statements that allow a request, conditions evaluated. */
export function allowing(statements: readonly Statement[], request: IamRequest): Statement[] {
  return statements.filter(
    (s) =>
      s.effect === "Allow" &&
      s.actions.some((a) => wildcard(a, request.action, true)) &&
      s.resources.some((r) => wildcard(r, request.resource)) &&
      Object.entries(s.conditions).every(([op, keys]) => conditionHolds(op, keys, request)),
  );
}
