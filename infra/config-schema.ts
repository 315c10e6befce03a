import * as z from "zod/mini";

/** A whole number in [min, max]; the error shows the expected form. */
export const wholeNumber = (min: number, max: number) => {
  const expected = `expected a whole number from ${min} to ${max}`;
  return z.number(expected).check(z.int(expected), z.minimum(min, expected), z.maximum(max, expected));
};
/** A whole number in [min, max], `fallback` when not given. */
export const int = (fallback: number, min: number, max: number) =>
  z._default(wholeNumber(min, max), fallback);
/** An ARN of `service` (any partition). */
export const arn = (service: string) =>
  z
    .string()
    .check(z.regex(new RegExp(`^arn:aws[a-z-]*:${service}:`), `expected an ARN (arn:aws:${service}:…)`));
