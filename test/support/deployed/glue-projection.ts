/**
 * Athena's partition projection, evaluated on a Glue table of a synthesized template: whether an
 * object key the writers produce is in a partition the table projects (its location template, each
 * partition column's type, format and range), so Athena reads it. Only what this stack's tables
 * use: `date` (yyyy-MM-dd, a fixed start, an end `NOW` or fixed), `integer` (range, digits) and
 * `injected` (any value: the query names it). AWS's reference: "Supported types for partition
 * projection" (https://docs.aws.amazon.com/athena/latest/ug/partition-projection-supported-types.html).
 */

/** The parts of a Glue table's `TableInput` that decide where Athena reads. */
export interface GlueTableInput {
  Name: string;
  PartitionKeys?: Array<{ Name: string }>;
  Parameters?: Record<string, string>;
  StorageDescriptor?: {
    Location?: unknown;
    InputFormat?: string;
    SerdeInfo?: { SerializationLibrary?: string };
  };
}

/** A template value with the bucket's name resolved to `bucket` (`Fn::Join` of strings and a `Ref`). */
export function resolved(value: unknown, bucket: string): string {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && "Fn::Join" in value) {
    const [separator, parts] = (value as { "Fn::Join": [string, unknown[]] })["Fn::Join"];
    return parts.map((p) => resolved(p, bucket)).join(separator);
  }
  if (value && typeof value === "object" && "Ref" in value) return bucket;
  throw new Error(`cannot resolve ${JSON.stringify(value)}`);
}

/**
 * Why Athena would not read `key` as a row of `table` when a query runs on `today` (YYYY-MM-DD),
 * or undefined when it would: the key lies directly in a location the template and the partition
 * values give, each value projected (in its range, of its format).
 *
 * @example outsideProjection(edges, "bucket", "edge/date=2023-10-10/b.ndjson.gz", "2026-01-02") // undefined
 */
export function outsideProjection(
  table: GlueTableInput,
  bucket: string,
  key: string,
  today: string,
): string | undefined {
  const parameters = table.Parameters ?? {};
  if (parameters["projection.enabled"] !== "true") return `${table.Name}: projection is not enabled`;
  const template = resolved(parameters["storage.location.template"], bucket);
  const location = resolved(table.StorageDescriptor?.Location, bucket);
  if (
    !template.startsWith(location.endsWith("/") ? location : `${location}/`) &&
    !template.startsWith(location)
  )
    return `${table.Name}: its location template ${template} is not under its location ${location}`;
  const columns: string[] = [];
  const pattern = template
    .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
    .replace(/\\?\$\{([a-z_]+)\}/g, (_, name: string) => {
      columns.push(name);
      return "([^/]+)";
    });
  // Athena reads the objects of a partition's folder, not those of its subfolders.
  const match = new RegExp(`^${pattern}([^/]+)$`).exec(`s3://${bucket}/${key}`);
  if (!match) return `${key} is not in a location of ${table.Name} (${template})`;
  const partitionKeys = (table.PartitionKeys ?? []).map((k) => k.Name);
  for (const [i, column] of columns.entries()) {
    if (!partitionKeys.includes(column)) return `${table.Name}: ${column} is not a partition key`;
    const value = match[i + 1] ?? "";
    const problem = outsideColumn(parameters, column, value, today);
    if (problem) return `${key}: ${table.Name}.${column} ${problem}`;
  }
  return undefined;
}

function outsideColumn(
  parameters: Record<string, string>,
  column: string,
  value: string,
  today: string,
): string | undefined {
  const type = parameters[`projection.${column}.type`];
  if (type === "injected") return undefined;
  const range = parameters[`projection.${column}.range`]?.split(",") ?? [];
  if (type === "date") {
    if (parameters[`projection.${column}.format`] !== "yyyy-MM-dd")
      return "has a format this check does not read";
    if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value} is not of the format yyyy-MM-dd`;
    const [from = "", to = ""] = range.map((r) => (r.trim() === "NOW" ? today : r.trim()));
    if (value < from || value > to)
      return `${value} is outside the projected range ${range.join(",")} (NOW = ${today})`;
    return undefined;
  }
  if (type === "integer") {
    const [from = 0, to = 0] = range.map(Number);
    const digits = Number(parameters[`projection.${column}.digits`] ?? 1);
    if (!/^\d+$/.test(value) || value.length < digits) return `${value} does not have ${digits} digits`;
    if (Number(value) < from || Number(value) > to) return `${value} is outside ${range.join(",")}`;
    return undefined;
  }
  return `has the projection type ${type}, which this check does not read`;
}

/** Whether a table's format reads the objects a writer produced under it (JSON lines, or Parquet). */
export function formatProblem(table: GlueTableInput, key: string, bytes: Uint8Array): string | undefined {
  const classification = table.Parameters?.classification;
  const serde = table.StorageDescriptor?.SerdeInfo?.SerializationLibrary ?? "";
  const parquet = bytes.length >= 4 && new TextDecoder().decode(bytes.subarray(0, 4)) === "PAR1";
  if (parquet)
    return classification === "parquet" && serde.includes("Parquet")
      ? undefined
      : `${key} is Parquet, ${table.Name} reads ${classification} (${serde})`;
  const gzip = bytes[0] === 0x1f && bytes[1] === 0x8b;
  if (classification !== "json" || !serde.includes("JsonSerDe"))
    return `${key} is JSON lines, ${table.Name} reads ${classification} (${serde})`;
  // Athena decompresses a text file by its suffix: gzip bytes must end in .gz.
  if (gzip !== key.endsWith(".gz")) return `${key}: gzip ${gzip}, but its suffix says otherwise`;
  return undefined;
}
