/**
 * JSON with sorted keys and no undefined: equal states give equal strings.
 *
 * @example canonicalJson({ b: 1, a: undefined, c: { y: 2, x: 1 } }) // '{"b":1,"c":{"x":1,"y":2}}'
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
