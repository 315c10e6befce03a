/**
 * The size of every item the projector writes, per table, read from the PutItem requests passing
 * through bench:cost's DynamoDB proxy: what a busy group's item grows to (#57), and how many of a
 * run's writes are over 1 KB (two write units or more).
 */
import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { PROJECTION_TABLE_NAMES } from "@webhook-backend/stream/projections/keys";
import { PROJECTION_TABLES, type TableNames } from "../../shared/platform/tables";

/**
 * An attribute value's size as DynamoDB counts it (the developer guide's "Item sizes and
 * formats": UTF-8 bytes of strings, one byte per two significant digits of a number plus one, 3
 * bytes for a list or map plus one per element). Written here, a few lines, rather than taken
 * from one of the small npm packages that do it: none is kept up, and the units DynamoDB Local
 * reports for each write stay the figures priced (`consumedCapacityMeter`).
 */
function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) {
    const digits = value.N.replace(/^-/, "").replace(".", "").replace(/^0+/, "").replace(/0+$/, "");
    return Math.ceil(digits.length / 2) + 1;
  }
  if (value.B !== undefined) return Buffer.from(value.B as unknown as string, "base64").length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.L !== undefined) return 3 + value.L.reduce((s, v) => s + valueBytes(v) + 1, 0);
  if (value.M !== undefined) return 3 + itemBytes(value.M) + Object.keys(value.M).length;
  if (value.SS !== undefined) return value.SS.reduce((s, v) => s + Buffer.byteLength(v), 0);
  return Buffer.byteLength(JSON.stringify(value));
}

/** An item's size as DynamoDB counts it: its attribute names and values. */
export function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce(
    (s, [name, value]) => s + Buffer.byteLength(name) + valueBytes(value),
    0,
  );
}

/** Collects the size of every projection item written (`onRequest`), per table (`Groups`, …). */
export function itemSizeMeter(names: TableNames) {
  const byName = new Map(PROJECTION_TABLE_NAMES.map((name) => [names[name], PROJECTION_TABLES[name].id]));
  const sizes = new Map<string, number[]>();
  return {
    onRequest(op: string, body: Buffer) {
      if (op !== "PutItem") return;
      const request = JSON.parse(body.toString("utf8")) as {
        TableName?: string;
        Item?: Record<string, AttributeValue>;
      };
      const table = byName.get(request.TableName ?? "");
      if (!table || !request.Item) return;
      sizes.set(table, [...(sizes.get(table) ?? []), itemBytes(request.Item)]);
    },
    clear: () => sizes.clear(),
    /** Per table: writes, how many over 1 KB, the largest and the median item (bytes). */
    summary(): Record<string, { writes: number; overOneKb: number; maxBytes: number; p50Bytes: number }> {
      return Object.fromEntries(
        [...sizes].map(([table, list]) => {
          const sorted = [...list].sort((a, b) => a - b);
          return [
            table,
            {
              writes: list.length,
              overOneKb: list.filter((b) => b > 1024).length,
              maxBytes: sorted.at(-1) ?? 0,
              p50Bytes: sorted[Math.floor((sorted.length - 1) / 2)] ?? 0,
            },
          ];
        }),
      );
    },
  };
}
