import { en } from "zod/locales";
import type * as z from "zod/mini";
import { ContractViolationError } from "./errors.ts";

/**
 * zod/mini ships no messages, and a library must not change its host's zod (`z.config`): every
 * parse here passes English messages itself ("Invalid input: expected string, received
 * undefined"), those classic zod gives. A schema's own `error` still wins.
 *
 * @example schema.safeParse(value, ENGLISH)
 */
export const ENGLISH: { error: NonNullable<z.core.ParseContext<z.core.$ZodIssue>["error"]> } = {
  error: en().localeError,
};

/**
 * Parses a value against a contract, with English messages; the error names every failing path,
 * never a value.
 *
 * @example parseContract(streamMessageSchema, JSON.parse(body), "stream message")
 * @throws ContractViolationError when the value does not match
 */
export function parseContract<S extends z.ZodMiniType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value, ENGLISH);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues
    .map((i: z.core.$ZodIssue) => `${i.path.join(".") || "(root)"}: ${i.message}`)
    .join("; ");
  throw new ContractViolationError(`invalid ${what}: ${problems}`, { cause: parsed.error });
}
