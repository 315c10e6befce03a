import { canonical, type IamRequest } from "./iam";
import type { RecordedCall } from "./recording-proxy";
import type { TemplateJson } from "./template";
import { COMMAND_ACTIONS } from "./usage";

/**
 * The recorded requests of a function as IAM requests on the template's resources. The local
 * stack's names are mapped to the template's logical resources through the function's
 * environment: the run and the stack build it from the same declarations
 * (`function-environment.ts`), so a variable that holds a local queue URL, bucket, table, topic,
 * secret or workgroup holds, in the template, that resource's `Ref` (or the imported secret's
 * ARN). A name the environment does not give is reported as `unmapped:<name>` (the check then
 * names it: a request on a resource the function was never told of).
 *
 * Beside each request, what AWS does with the function's credentials because of it (implicit
 * permissions): a publish to a topic encrypted with a customer-managed key uses that key through
 * SNS (`kms:GenerateDataKey`, `kms:Decrypt`, `kms:ViaService`), a read of a secret encrypted with
 * `secretsKmsKey` decrypts through Secrets Manager, and a GetObject of an absent key (404 from
 * the emulator) is answered 404 by S3 only to a caller granted `s3:ListBucket` (403 otherwise,
 * which `getObjectIfPresent` confirms by listing that exact key): a ListBucket with `s3:prefix`
 * the key, which is the request whose grant is undocumented to count for the 404.
 */
export function recordedRequests(
  template: TemplateJson,
  functionId: string,
  environment: Record<string, string | undefined>,
  calls: readonly RecordedCall[],
  secretsKmsKey: string,
): IamRequest[] {
  const names = resourceNames(template, functionId, environment);
  const named = (name: unknown) => names.get(String(name)) ?? { iam: `unmapped:${String(name)}` };
  const requests: IamRequest[] = [];
  const add = (call: RecordedCall, action: string, resource: string, context?: IamRequest["context"]) =>
    requests.push({ action, resource, via: call.operation, ...(context ? { context } : {}) });
  for (const call of calls) {
    const p = call.params;
    if (call.service === "dynamodb")
      for (const [action, resource, context] of dynamoRequests(call, named, template))
        add(call, action, resource, context);
    else if (call.service === "sqs")
      add(call, `sqs:${call.operation.replace(/Batch$/, "")}`, named(p.QueueUrl).iam);
    else if (call.service === "sns") {
      const topic = named(p.TopicArn);
      add(call, "sns:Publish", topic.iam);
      const key = topic.id && template.Resources[topic.id]?.Properties?.KmsMasterKeyId;
      if (key)
        for (const action of ["kms:GenerateDataKey", "kms:Decrypt"])
          add(call, action, canonical(key), { "kms:ViaService": "sns.REGION.amazonaws.com" });
    } else if (call.service === "secretsmanager") {
      add(call, "secretsmanager:GetSecretValue", named(p.SecretId).iam);
      add(call, "kms:Decrypt", secretsKmsKey, { "kms:ViaService": "secretsmanager.REGION.amazonaws.com" });
    } else if (call.service === "athena") add(call, `athena:${call.operation}`, named(p.WorkGroup).iam);
    else {
      const bucket = named(p.Bucket).iam;
      if (call.operation === "ListObjectsV2" || call.operation === "ListObjects")
        add(
          call,
          "s3:ListBucket",
          bucket,
          p.Prefix === undefined ? undefined : { "s3:prefix": String(p.Prefix) },
        );
      else if (call.operation === "DeleteObjects")
        for (const key of p.Keys as string[]) add(call, "s3:DeleteObject", `${bucket}/${key}`);
      else if (call.operation === "CopyObject") {
        const [source = "", ...key] = String(p.CopySource).replace(/^\//, "").split("/");
        add(call, "s3:GetObject", `${named(source).iam}/${key.join("/")}`);
        add(call, "s3:PutObject", `${bucket}/${String(p.Key)}`);
      } else {
        for (const action of COMMAND_ACTIONS[call.operation] ?? [`s3:${call.operation}`])
          add(call, action, `${bucket}/${String(p.Key)}`);
        if ((call.operation === "GetObject" || call.operation === "HeadObject") && call.status === 404)
          add({ ...call, operation: `${call.operation} of an absent key` }, "s3:ListBucket", bucket, {
            "s3:prefix": String(p.Key),
          });
      }
    }
  }
  return requests;
}

interface Named {
  iam: string;
  id?: string;
}

/** The IAM resource (and logical id) of each local name the function's environment holds. */
function resourceNames(
  template: TemplateJson,
  functionId: string,
  environment: Record<string, string | undefined>,
): Map<string, Named> {
  const variables =
    (
      template.Resources[functionId]?.Properties?.Environment as
        | { Variables?: Record<string, unknown> }
        | undefined
    )?.Variables ?? {};
  const names = new Map<string, Named>();
  for (const [name, local] of Object.entries(environment)) {
    const value = variables[name];
    if (local === undefined || value === undefined) continue;
    const ref = (value as { Ref?: unknown }).Ref;
    if (typeof ref !== "string") {
      if (typeof value === "string" && value.startsWith("arn:")) names.set(local, { iam: value });
      continue;
    }
    const type = template.Resources[ref]?.Type;
    const iam =
      type === "AWS::SNS::Topic"
        ? `ref:${ref}`
        : type === "AWS::Athena::WorkGroup"
          ? `arn:aws:athena:REGION:ACCOUNT:workgroup/ref:${ref}`
          : `arn:${ref}`;
    names.set(local, { iam, id: ref });
  }
  return names;
}

/** The key schema's partition key of a table of the template, by logical id. */
function partitionKeyOf(template: TemplateJson, id: string | undefined): string | undefined {
  const schema = id
    ? (template.Resources[id]?.Properties?.KeySchema as Array<{ AttributeName: string; KeyType: string }>)
    : undefined;
  return schema?.find((k) => k.KeyType === "HASH")?.AttributeName;
}

type DynamoRequest = [action: string, resource: string, context?: IamRequest["context"]];

/**
 * A DynamoDB request's IAM requests: one per table it addresses (a batch's or a transaction's
 * each), its index, and the partition keys it reads or writes (`dynamodb:LeadingKeys`) where the
 * request names them (a key, an item, a query's key condition).
 */
function dynamoRequests(
  call: RecordedCall,
  named: (name: unknown) => Named,
  template: TemplateJson,
): DynamoRequest[] {
  const p = call.params as Record<string, unknown>;
  const leading = (value: unknown) => {
    const v = value as { S?: string; N?: string } | undefined;
    return v?.S ?? v?.N;
  };
  const one = (
    action: string,
    table: unknown,
    items: Array<Record<string, unknown>>,
    index?: unknown,
  ): DynamoRequest => {
    const target = named(table);
    const hash = partitionKeyOf(template, target.id);
    const keys = items
      .map((item) => leading(hash ? item[hash] : undefined))
      .filter((k): k is string => k !== undefined);
    return [
      `dynamodb:${action}`,
      index ? `${target.iam}/index/${String(index)}` : target.iam,
      keys.length ? { "dynamodb:LeadingKeys": [...new Set(keys)] } : undefined,
    ];
  };
  const op = call.operation;
  if (["GetItem", "DeleteItem", "UpdateItem"].includes(op))
    return [one(op, p.TableName, [p.Key as Record<string, unknown>])];
  if (op === "PutItem") return [one(op, p.TableName, [p.Item as Record<string, unknown>])];
  if (op === "Query" || op === "Scan") return [one(op, p.TableName, queryKeys(p), p.IndexName)];
  if (op === "BatchGetItem")
    return Object.entries(p.RequestItems as Record<string, { Keys: Array<Record<string, unknown>> }>).map(
      ([table, r]) => one("BatchGetItem", table, r.Keys),
    );
  if (op === "BatchWriteItem")
    return Object.entries(
      p.RequestItems as Record<
        string,
        Array<Record<string, { Item?: Record<string, unknown>; Key?: Record<string, unknown> }>>
      >,
    ).flatMap(([table, writes]) =>
      writes.map((w) =>
        w.PutRequest
          ? one("PutItem", table, [w.PutRequest.Item ?? {}])
          : one("DeleteItem", table, [w.DeleteRequest?.Key ?? {}]),
      ),
    );
  if (op === "TransactWriteItems" || op === "TransactGetItems")
    return (
      p.TransactItems as Array<
        Record<string, { TableName: string; Key?: Record<string, unknown>; Item?: Record<string, unknown> }>
      >
    ).flatMap((item) =>
      Object.entries(item).map(([kind, r]) =>
        one(
          {
            Put: "PutItem",
            Delete: "DeleteItem",
            Update: "UpdateItem",
            ConditionCheck: "ConditionCheckItem",
            Get: "GetItem",
          }[kind] ?? kind,
          r.TableName,
          [r.Item ?? r.Key ?? {}],
        ),
      ),
    );
  return [one(op, p.TableName, [])];
}

/** A query's partition key value, from its key condition (`#pk = :pk`), as an item of one attribute. */
function queryKeys(p: Record<string, unknown>): Array<Record<string, unknown>> {
  const condition = String(p.KeyConditionExpression ?? "");
  const names = (p.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (p.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  return [...condition.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)].map((m) => ({
    [names[m[1] ?? ""] ?? m[1] ?? ""]: values[m[2] ?? ""],
  }));
}
