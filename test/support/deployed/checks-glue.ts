import { formatProblem, type GlueTableInput, outsideProjection, resolved } from "./glue-projection";
import { resourcesOf, type TemplateJson } from "./template";

/** An object a writer produced, and the day a query reads it (its day, or its writing's if later). */
export interface WrittenObject {
  key: string;
  bytes: Uint8Array;
  readOn: string;
}

/** The Glue tables of a template, by name. */
export function glueTables(template: TemplateJson): GlueTableInput[] {
  return resourcesOf(template, "AWS::Glue::Table").map(([, r]) => {
    const input = r.Properties?.TableInput;
    if (!input || typeof input !== "object") throw new Error("a Glue table without TableInput");
    return input as GlueTableInput;
  });
}

/**
 * Check: each object the writers produce under a table's location is read by that table on the
 * day a query reads it: in a projected partition (location template, date range, hour digits),
 * in the table's format (JSON lines gzip by suffix, or Parquet). The bucket's name is a runtime
 * value (a `Ref` in the template): `bucket` stands for it.
 */
export function glueProblems(template: TemplateJson, objects: readonly WrittenObject[], bucket = "bucket") {
  const tables = glueTables(template);
  const problems: string[] = [];
  for (const object of objects) {
    const under = tables.filter((t) => `s3://${bucket}/${object.key}`.startsWith(locationOf(t, bucket)));
    if (under.length === 0) {
      problems.push(`${object.key}: under no Glue table's location`);
      continue;
    }
    const reasons = under.map((t) => outsideProjection(t, bucket, object.key, object.readOn));
    const reader = under.find((_, i) => reasons[i] === undefined);
    if (!reader) {
      problems.push(...reasons.filter((r): r is string => r !== undefined));
      continue;
    }
    const format = formatProblem(reader, object.key, object.bytes);
    if (format) problems.push(format);
  }
  return problems;
}

function locationOf(table: GlueTableInput, bucket: string): string {
  const location = resolved(table.StorageDescriptor?.Location, bucket);
  return location.endsWith("/") ? location : `${location}/`;
}
