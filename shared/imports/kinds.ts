import * as z from "zod/mini";

/**
 * The spec's import kinds (section 1: "users, groups, group members and messages"), declared once
 * and iterated by the command and the adapter: a kind is ready when the spec shows its path and
 * payload. Only `users` is (section 4, endpoint 3); the others wait for theirs (section 4: "Paths
 * and payloads for groups, members and messages: not shown"), so that each is one declaration
 * away: a path, a schema for a file entry, its id, and the request body (docs/operating.md).
 */
export type ImportKindName = "users" | "groups" | "members" | "messages";

/** A kind the platform's path and payload are known for. */
export interface ReadyImportKind<T extends { [key: string]: unknown }> {
  name: ImportKindName;
  ready: true;
  /** Its path under `{import_url}` (spec section 4). */
  path: string;
  /** One entry of an import file: what the kind requires, the rest kept as the file gives it. */
  entry: z.ZodMiniType<T>;
  /** The entry's id: the key of the request body's object and of the answer's results. */
  id(entry: T): string;
  /** The request body of a batch. */
  body(entries: readonly T[]): unknown;
  /**
   * When the figures count a confirmed entry from (epoch seconds), if the file says (users: their
   * `createdAt`); undefined: from the day the platform confirmed it (docs/analytics.md, "Imported
   * users"). Absent for a kind the figures do not read.
   */
  countsFrom?(entry: T): number | undefined;
}

/** A kind whose path or payload the spec does not show yet. */
export interface WaitingImportKind {
  name: ImportKindName;
  ready: false;
  /** What it waits for, as a user reads it. */
  waitsFor: string;
}

/** Epoch seconds; a value this large is milliseconds (the year 5138 in seconds). */
const MAX_EPOCH_SECONDS = 100_000_000_000;

/**
 * A user of an import file: `uid` and `name` (spec 2.3: "in import, a user is an object with
 * `uid` and `name`"), an optional `createdAt` (epoch seconds, as every timestamp of the spec's
 * resources) that the backend's figures count the user from, and any other field, sent as given
 * (spec 2.8: the import's other user fields and their constraints are not shown: the platform
 * judges them, and a refusal names the user with its reason).
 */
export const importUserSchema = z.looseObject({
  uid: z.string("expected a string (required)").check(z.minLength(1, "expected a uid, not an empty string")),
  name: z
    .string("expected a string (required)")
    .check(z.minLength(1, "expected a name, not an empty string")),
  createdAt: z.optional(
    z
      .number("expected epoch seconds (a number)")
      .check(
        z.int("expected whole epoch seconds"),
        z.minimum(0, "expected epoch seconds from 1970"),
        z.maximum(MAX_EPOCH_SECONDS, "expected epoch seconds (this looks like milliseconds)"),
      ),
  ),
});
export type ImportUser = z.infer<typeof importUserSchema>;

/** `POST {import_url}/users` with `{"users": {<uid>: {"uid", "name", …}}}` and header `apiKey` (spec section 4, endpoint 3). */
export const USERS_IMPORT: ReadyImportKind<ImportUser> = {
  name: "users",
  ready: true,
  path: "/users",
  entry: importUserSchema,
  id: (user) => user.uid,
  body: (users) => ({ users: Object.fromEntries(users.map((u) => [u.uid, u])) }),
  countsFrom: (user) => user.createdAt,
};

const waiting = (name: ImportKindName, what: string): WaitingImportKind => ({
  name,
  ready: false,
  waitsFor: `the spec does not show the path and payload of ${what} import (section 4: "not shown"): it waits for them (docs/operating.md, "Importing")`,
});

/** Every kind of the spec, ready or waiting. */
export const IMPORT_KINDS: Readonly<Record<ImportKindName, ReadyImportKind<ImportUser> | WaitingImportKind>> =
  {
    users: USERS_IMPORT,
    groups: waiting("groups", "group"),
    members: waiting("members", "group member"),
    messages: waiting("messages", "message"),
  };
